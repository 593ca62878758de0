# Scores then row softmax, written as two phases: the first nest computes every
# score block of the [M, N] matrix into one SBUF buffer, the second normalises
# each 128-row block. The buffer is larger than SBUF, so the model spills it.
# Running the softmax of a row block right after its scores keeps them on chip:
# fission the first nest, interchange it, fuse it with the second. The two
# intermediate states are slower than this kernel.
#
# Inputs (HBM, float32): qT [D, M] = [64, 2048], k [D, N] = [64, 4096]
# Output: out [M, N], out[i, :] = softmax(qT[:, i] . k)
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(qT, k):
  D, M = qT.shape
  D_k, N = k.shape
  TILE_M = 128
  TILE_N = 512
  out = nl.ndarray((M, N), dtype=np.float32, buffer=nl.shared_hbm)
  k_sb = nl.ndarray((N // TILE_N, nl.par_dim(D), TILE_N), dtype=np.float32, buffer=nl.sbuf)
  scores = nl.ndarray((M // TILE_M, nl.par_dim(TILE_M), N), dtype=np.float32, buffer=nl.sbuf)
  for n in nl.affine_range(N // TILE_N):
    k_sb[n, nl.arange(D)[:, None], nl.arange(TILE_N)[None, :]] = nl.load(k[nl.arange(D)[:, None], n * TILE_N + nl.arange(TILE_N)[None, :]])
    for m in nl.affine_range(M // TILE_M):
      q_tile = nl.load(qT[nl.arange(D)[:, None], m * TILE_M + nl.arange(TILE_M)[None, :]])
      ps = nisa.nc_matmul(q_tile, k_sb[n, nl.arange(D)[:, None], nl.arange(TILE_N)[None, :]])
      scores[m, nl.arange(TILE_M)[:, None], n * TILE_N + nl.arange(TILE_N)[None, :]] = nl.copy(ps, dtype=np.float32)
  for r in nl.affine_range(M // TILE_M):
    row_max = nisa.tensor_reduce(op=nl.max, data=scores[r, nl.arange(TILE_M)[:, None], nl.arange(N)[None, :]], axis=[1], keepdims=True)
    neg_max = nisa.tensor_scalar(data=row_max, op0=nl.multiply, operand0=-1.0)
    e = nisa.activation(op=nl.exp, data=scores[r, nl.arange(TILE_M)[:, None], nl.arange(N)[None, :]], bias=neg_max, scale=1.0)
    row_sum = nisa.tensor_reduce(op=nl.add, data=e, axis=[1], keepdims=True)
    inv_sum = nisa.reciprocal(data=row_sum)
    y = nisa.tensor_scalar(data=e, op0=nl.multiply, operand0=inv_sum)
    nl.store(out[r * TILE_M + nl.arange(TILE_M)[:, None], nl.arange(N)[None, :]], value=y)
  return out
