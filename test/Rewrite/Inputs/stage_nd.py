# stage of 3-D tiles: x's and v's tiles (128 x 4 x 64) do not depend on the batch loop b.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, v, w):
  out = nl.ndarray((2, 2, 128, 4, 64), dtype=np.float32, buffer=nl.shared_hbm)
  vb = nl.ndarray((2, 2, nl.par_dim(128), 4, 64), dtype=np.float32, buffer=nl.sbuf)
  for b in nl.affine_range(2):
    for m in nl.affine_range(2):
      xt = nl.load(x[m, 0:128, 0:4, 0:64])
      vb[b, m, 0:128, 0:4, 0:64] = nl.load(v[m, 0:128, 0:4, 0:64])
      wt = nl.load(w[b, m, 0:128, 0:4, 0:64])
      y = nl.multiply(xt, wt)
      y2 = nl.add(y, vb[b, m, 0:128, 0:4, 0:64])
      nl.store(out[b, m, 0:128, 0:4, 0:64], value=y2)
  return out
