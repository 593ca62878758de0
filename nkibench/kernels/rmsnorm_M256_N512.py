# RMSNorm over the rows of a matrix, with a learned per-column weight.
#
# Inputs (HBM, float32):
#   x      [M, N] = [256, 512]
#   gamma  [1, N]               weight row (the reference's (N,) vector reshaped to one row)
#   eps    Python float         1e-5
# Output:
#   out    [M, N]   out[i, j] = x[i, j] / sqrt(mean_j(x[i, :]^2) + eps) * gamma[0, j]
#
# Each 128-row tile lives on the 128 partitions, a whole row (512 elements) in the
# free dimension: square, row sum (free-axis reduction, kept as a (128, 1)
# per-partition vector), scale by 1/N and add eps in one tensor_scalar, rsqrt,
# multiply by the (128, 1) vector (free-axis broadcast), multiply by gamma
# broadcast from one row to 128 partitions.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(x, gamma, eps):
  M, N = x.shape
  TILE_P = nl.tile_size.pmax  # 128 rows per tile
  assert M % TILE_P == 0

  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)

  i_p = nl.arange(TILE_P)[:, None]   # partition index (rows of a tile)
  i_f = nl.arange(N)[None, :]        # free index (columns)
  i_one = nl.arange(1)[:, None]      # a single partition

  # The weight row is the same for every row tile: load it once and
  # broadcast it across the 128 partitions.
  gamma_row = nl.load(gamma[i_one, i_f])              # [1, N]
  gamma_tile = gamma_row.broadcast_to((TILE_P, N))    # [128, N]

  for m in nl.affine_range(M // TILE_P):
    x_tile = nl.load(x[m * TILE_P + i_p, i_f])                # [128, N]

    x_sq = nl.square(x_tile)                                  # x^2
    sq_sum = nl.sum(x_sq, axis=[1], keepdims=True)            # [128, 1] = sum_j x^2
    # mean + eps = sq_sum * (1/N) + eps
    mean_eps = nisa.tensor_scalar(data=sq_sum, op0=nl.multiply, operand0=1.0 / N,
                                  op1=nl.add, operand1=eps)
    inv_rms = nl.rsqrt(mean_eps)                              # [128, 1]

    normed = nl.multiply(x_tile, inv_rms)                     # row-wise scale
    y_tile = nl.multiply(normed, gamma_tile)                  # column-wise weight

    nl.store(out[m * TILE_P + i_p, i_f], value=y_tile)

  return out
