# Numerically stable row softmax, in the current `nki` dialect (nl.load /
# nl.store from NKI 0.3.0 for the HBM traffic).
#
# Inputs (HBM, float32):
#   x    [M, N] = [256, 512]
# Output:
#   out  [M, N]   out[i, j] = exp(x[i, j] - max_j x[i, :]) / sum_j exp(x[i, j] - max_j x[i, :])
#
# Per 128-row tile:
#   neg_max = tensor_reduce(maximum, axis=1, negate=True, keepdims=True)   [128, 1]
#   e       = activation(exp, x, bias=neg_max, scale=1.0)                   exp(x - max)
#   row_sum = tensor_reduce(add, e, axis=1, keepdims=True)                  [128, 1]
#   inv_sum = reciprocal(row_sum)
#   out     = tensor_scalar(e * inv_sum)                                    per-partition scalar
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(x):
  M, N = x.shape
  P = nl.tile_size.pmax
  assert M % P == 0

  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)

  for m in nl.affine_range(M // P):
    r0 = m * P
    x_sb = nl.load(x[r0:r0 + P, 0:N])

    neg_max = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=neg_max, op=nl.maximum, data=x_sb, axis=1,
                       negate=True, keepdims=True)

    e = nl.ndarray((P, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=e, op=nl.exp, data=x_sb, bias=neg_max, scale=1.0)

    row_sum = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=row_sum, op=nl.add, data=e, axis=1, keepdims=True)

    inv_sum = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.reciprocal(dst=inv_sum, data=row_sum)

    y = nl.ndarray((P, N), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=y, data=e, op0=nl.multiply, operand0=inv_sum)

    nl.store(out[r0:r0 + P, 0:N], value=y)

  return out
