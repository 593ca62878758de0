# reorder: the load nest of w (L1) sits between the producer of t (L0) and its consumer (L2), so
# fuse and compute_at refuse them; it reads nothing L0 writes, so it can move before L0.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, w):
  out = nl.ndarray((256, 512), dtype=np.float32, buffer=nl.shared_hbm)
  t = nl.ndarray((2, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.sbuf)
  wb = nl.ndarray((2, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.sbuf)
  for m in nl.affine_range(2):
    xt = nl.load(x[m * 128:(m + 1) * 128, 0:512])
    t[m, 0:128, 0:512] = nl.exp(xt)
  for k in nl.affine_range(2):
    wb[k, 0:128, 0:512] = nl.load(w[k * 128:(k + 1) * 128, 0:512])
  for n in nl.affine_range(2):
    y = nl.multiply(t[n, 0:128, 0:512], wb[n, 0:128, 0:512])
    nl.store(out[n * 128:(n + 1) * 128, 0:512], value=y)
  return out
