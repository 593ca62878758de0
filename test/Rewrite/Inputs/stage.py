# Loads for stage: x's row block and v's (into a buffer block) do not depend on the batch loop b,
# w's does.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, v, w):
  out = nl.ndarray((2, 256, 512), dtype=np.float32, buffer=nl.shared_hbm)
  vb = nl.ndarray((2, 2, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.sbuf)
  for b in nl.affine_range(2):
    for m in nl.affine_range(2):
      r0 = m * 128
      x_t = nl.load(x[r0:r0 + 128, 0:512])
      vb[b, m, 0:128, 0:512] = nl.load(v[r0:r0 + 128, 0:512])
      w_t = nl.load(w[b, r0:r0 + 128, 0:512])
      y = nl.multiply(x_t, w_t)
      y2 = nl.add(y, vb[b, m, 0:128, 0:512])
      nl.store(out[b, r0:r0 + 128, 0:512], value=y2)
  return out
