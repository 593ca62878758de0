# Direction pair "spill_buffer" (after): the buffer shrunk to one row tile.
#
# Input (HBM, float32):
#   x    [M, N] = [1024, 7168]
# Output:
#   out  [M, N]   out[i, :] = x[i, :] / sqrt(sum_j x[i, j]^2)   (rows scaled to unit L2 norm)
#
# AFTER: both passes run inside the row-tile loop, so the tile buffer only
# has to hold the 7 column tiles of one 128-row block: x_all is allocated per
# row tile, 7 x 4 KiB = 28 KiB per partition, well inside SBUF, and no
# spill is needed. The arithmetic (and its summation order) is unchanged.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(x):
  M, N = x.shape
  P = nl.tile_size.pmax     # 128 rows per tile
  F = 1024                  # columns per tile
  assert M % P == 0 and N % F == 0
  n_m = M // P              # 8
  n_f = N // F              # 7

  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)


  # pass 1: load everything, accumulate sum of squares per row
  for m in nl.affine_range(n_m):
    sq_sum = nl.zeros((nl.par_dim(P), 1), dtype=nl.float32, buffer=nl.sbuf)
    x_all = nl.ndarray((n_f, nl.par_dim(P), F), dtype=nl.float32, buffer=nl.sbuf)
    for f in nl.affine_range(n_f):
      x_all[f, 0:P, 0:F] = nl.load(x[m * P:(m + 1) * P, f * F:(f + 1) * F])
      tile_sq = nl.square(x_all[f, 0:P, 0:F])
      sq_sum[0:P, 0:1] += nl.sum(tile_sq, axis=[1], keepdims=True)

    # pass 2: scale every tile by 1 / norm of its row
    inv_norm = nl.rsqrt(sq_sum[0:P, 0:1])
    for f in nl.affine_range(n_f):
      res = nl.multiply(x_all[f, 0:P, 0:F], inv_norm)
      nl.store(out[m * P:(m + 1) * P, f * F:(f + 1) * F], value=res)

  return out
