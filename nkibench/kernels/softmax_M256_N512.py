# Numerically stable softmax over each row of a matrix.
#
# Inputs (HBM, float32):
#   x    [M, N] = [256, 512]
# Output:
#   out  [M, N]   out[i, j] = exp(x[i, j] - max_j x[i, :]) / sum_j exp(x[i, j] - max_j x[i, :])
#
# Per 128-row tile (a whole row of 512 in the free dimension):
#   row_max  = tensor_reduce(max)                     [128, 1]
#   neg_max  = tensor_scalar(row_max * -1)            [128, 1]
#   e        = activation(exp, x, bias=neg_max)       exp(1.0 * x + (-max))
#   row_sum  = tensor_reduce(add, e)                  [128, 1]
#   inv_sum  = reciprocal(row_sum)                    [128, 1]
#   out      = tensor_scalar(e * inv_sum)             per-partition scalar multiply
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(x):
  M, N = x.shape
  TILE_P = nl.tile_size.pmax
  assert M % TILE_P == 0

  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)

  for m in nl.affine_range(M // TILE_P):
    row0 = m * TILE_P
    x_tile = nl.load(x[row0:row0 + TILE_P, 0:N])                     # [128, N]

    row_max = nisa.tensor_reduce(op=nl.max, data=x_tile, axis=[1], keepdims=True)
    neg_max = nisa.tensor_scalar(data=row_max, op0=nl.multiply, operand0=-1.0)

    # exp(x * 1.0 + bias) with a per-partition bias of -max
    exp_tile = nisa.activation(op=nl.exp, data=x_tile, bias=neg_max, scale=1.0)

    row_sum = nisa.tensor_reduce(op=nl.add, data=exp_tile, axis=[1], keepdims=True)
    inv_sum = nisa.reciprocal(data=row_sum)

    y_tile = nisa.tensor_scalar(data=exp_tile, op0=nl.multiply, operand0=inv_sum)

    nl.store(out[row0:row0 + TILE_P, 0:N], value=y_tile)

  return out
