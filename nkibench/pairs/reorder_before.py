# Direction pair "reorder" (before): the load nest of w sits between the producer of t and its
# consumer, so the two nests over the same blocks cannot be fused; reorder moves it first.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

M = 1024
N = 1024
TILE_P = 128


@nki.jit
def kernel(x, w):
  out = nl.ndarray((M, N), dtype=np.float32, buffer=nl.shared_hbm)
  t = nl.ndarray((M // TILE_P, nl.par_dim(TILE_P), N), dtype=np.float32, buffer=nl.sbuf)
  wb = nl.ndarray((M // TILE_P, nl.par_dim(TILE_P), N), dtype=np.float32, buffer=nl.sbuf)
  for m in nl.affine_range(M // TILE_P):
    xt = nl.load(x[m * TILE_P:(m + 1) * TILE_P, 0:N])
    t[m, 0:TILE_P, 0:N] = nl.exp(xt)
  for k in nl.affine_range(M // TILE_P):
    wb[k, 0:TILE_P, 0:N] = nl.load(w[k * TILE_P:(k + 1) * TILE_P, 0:N])
  for n in nl.affine_range(M // TILE_P):
    y = nl.multiply(t[n, 0:TILE_P, 0:N], wb[n, 0:TILE_P, 0:N])
    nl.store(out[n * TILE_P:(n + 1) * TILE_P, 0:N], value=y)
  return out
