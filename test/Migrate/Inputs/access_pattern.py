# NKI 0.1 indices that need an access pattern: a flattened [8, 128] grid written by a load, and a
# grid laid out across the free dimensions in another order (a transpose) read by an ISA call.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(x):
  out = nl.ndarray((2, 128, 1024), dtype=np.float32, buffer=nl.shared_hbm)
  out2 = nl.ndarray((128, 128, 8), dtype=np.float32, buffer=nl.shared_hbm)
  t = nl.ndarray((2, nl.par_dim(128), 1024), dtype=np.float32, buffer=nl.sbuf)
  for b in nl.affine_range(2):
    t[b, nl.arange(128)[:, None, None], 128 * nl.arange(8)[None, :, None] + nl.arange(128)[None, None, :]] = nl.load(
        x[b, nl.arange(128)[:, None, None], nl.arange(8)[None, :, None], nl.arange(128)[None, None, :]],
        dtype=np.float32, mask=None)
    u = nl.ndarray((nl.par_dim(128), 1024), dtype=np.float32, buffer=nl.sbuf)
    u[nl.arange(128)[:, None], nl.arange(1024)[None, :]] = nisa.activation(
        op=nl.exp, data=t[b, nl.arange(128)[:, None], nl.arange(1024)[None, :]], mask=None)
    nl.store(out[b, nl.arange(128)[:, None], nl.arange(1024)[None, :]], value=u[nl.arange(128)[:, None], nl.arange(1024)[None, :]])
  w = nl.ndarray((nl.par_dim(128), 128, 8), dtype=np.float32, buffer=nl.sbuf)
  w[nl.arange(128)[:, None, None], nl.arange(128)[None, :, None], nl.arange(8)[None, None, :]] = nisa.tensor_copy(
      t[1, nl.arange(128)[:, None, None], nl.arange(8)[None, None, :] * 128 + nl.arange(128)[None, :, None]], mask=None)
  nl.store(out2[nl.arange(128)[:, None, None], nl.arange(128)[None, :, None], nl.arange(8)[None, None, :]],
           value=w[nl.arange(128)[:, None, None], nl.arange(128)[None, :, None], nl.arange(8)[None, None, :]])
  return out, out2
