# LayerNorm over the rows of a matrix, with weight and bias vectors.
#
# Inputs (HBM, float32):
#   x      [M, N] = [256, 512]
#   gamma  [N]              per-column weight
#   beta   [N]              per-column bias
# Output:
#   out    [M, N]   out[i, :] = (x[i, :] - mean_i) / sqrt(var_i + 1e-5) * gamma + beta
#                   mean_i = mean(x[i, :]),  var_i = mean((x[i, :] - mean_i)^2)  (biased)
#
# gamma and beta are 1-D in HBM; they are viewed as one row with .reshape((1, N)),
# loaded once and broadcast to 128 partitions.
# Per 128-row tile:
#   row_sum  = tensor_reduce(add, x)                    [128, 1]
#   neg_mean = row_sum * (-1/N)                         [128, 1]
#   xc       = x + neg_mean                             (per-partition scalar add)
#   sq       = activation(square, xc)
#   var_sum  = sum(sq, axis=[1])                        [128, 1]
#   var_eps  = var_sum * (1/N) + eps                    [128, 1]
#   rstd     = rsqrt(var_eps)
#   out      = xc * rstd * gamma + beta
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(x, gamma, beta):
  M, N = x.shape
  TILE_P = nl.tile_size.pmax
  assert M % TILE_P == 0
  eps = 1e-5

  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)

  i_p = nl.arange(TILE_P)[:, None]
  i_f = nl.arange(N)[None, :]
  i_one = nl.arange(1)[:, None]

  gamma_row = nl.load(gamma.reshape((1, N))[i_one, i_f])
  beta_row = nl.load(beta.reshape((1, N))[i_one, i_f])
  gamma_tile = gamma_row.broadcast_to((TILE_P, N))
  beta_tile = beta_row.broadcast_to((TILE_P, N))

  for m in nl.affine_range(M // TILE_P):
    x_tile = nl.load(x[m * TILE_P + i_p, i_f])

    # mean, folded into a negative per-partition offset
    row_sum = nisa.tensor_reduce(op=nl.add, data=x_tile, axis=[1], keepdims=True)
    neg_mean = nisa.tensor_scalar(data=row_sum, op0=nl.multiply, operand0=-1.0 / N)
    centered = nisa.tensor_scalar(data=x_tile, op0=nl.add, operand0=neg_mean)

    # variance of the centered row
    centered_sq = nisa.activation(op=nl.square, data=centered)
    var_sum = nl.sum(centered_sq, axis=[1], keepdims=True)
    var_eps = nisa.tensor_scalar(data=var_sum, op0=nl.multiply, operand0=1.0 / N,
                                 op1=nl.add, operand1=eps)
    rstd = nl.rsqrt(var_eps)

    normed = nl.multiply(centered, rstd)
    scaled = nl.multiply(normed, gamma_tile)
    y_tile = nl.add(scaled, beta_tile)

    nl.store(out[m * TILE_P + i_p, i_f], value=y_tile)

  return out
