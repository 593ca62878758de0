# Two kernels whose tile `t` has different shapes ([128, 1024] and [128, 512]): the access pattern
# of each transposed read takes its steps from its own kernel's `t`.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def wide(x):
  out = nl.ndarray((128, 128, 8), dtype=np.float32, buffer=nl.shared_hbm)
  t = nl.load(x[nl.arange(128)[:, None], nl.arange(1024)[None, :]])
  w = nisa.tensor_copy(t[nl.arange(128)[:, None, None], nl.arange(8)[None, None, :] * 128 + nl.arange(128)[None, :, None]])
  nl.store(out[nl.arange(128)[:, None, None], nl.arange(128)[None, :, None], nl.arange(8)[None, None, :]], value=w)
  return out


@nki.jit
def narrow(x):
  out = nl.ndarray((128, 128, 4), dtype=np.float32, buffer=nl.shared_hbm)
  t = nl.load(x[nl.arange(128)[:, None], nl.arange(512)[None, :]])
  w = nisa.tensor_copy(t[nl.arange(128)[:, None, None], nl.arange(4)[None, None, :] * 128 + nl.arange(128)[None, :, None]])
  nl.store(out[nl.arange(128)[:, None, None], nl.arange(128)[None, :, None], nl.arange(4)[None, None, :]], value=w)
  return out
