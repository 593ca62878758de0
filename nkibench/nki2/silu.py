# SiLU, x * sigmoid(x) = x / (1 + exp(-x)), in the current `nki` dialect.
#
# Inputs (HBM, float32):
#   x    [M, N] = [256, 1024]
# Output:
#   out  [M, N]   out = x / (1 + exp(-x))
#
# Tiles of [128, 512] over a 2-D affine_range. The zero bias vector is filled
# once with nisa.memset(dst, value); exp(-x) is one ScalarE activation with
# scale=-1.0 (out = op(data * scale + bias)); 1 + e is a tensor_scalar with
# reverse0=True; 1 / d is nisa.reciprocal(dst, data); the final product is a
# tensor_tensor multiply.
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(x):
  M, N = x.shape
  P = nl.tile_size.pmax
  F = 512
  assert M % P == 0 and N % F == 0

  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)

  zero_bias = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
  nisa.memset(dst=zero_bias, value=0.0)

  for m in nl.affine_range(M // P):
    for n in nl.affine_range(N // F):
      r0 = m * P
      c0 = n * F
      x_sb = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
      nisa.dma_copy(dst=x_sb, src=x[r0:r0 + P, c0:c0 + F])

      e = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
      nisa.activation(dst=e, op=nl.exp, data=x_sb, bias=zero_bias, scale=-1.0)

      d = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
      nisa.tensor_scalar(dst=d, data=e, op0=nl.add, operand0=1.0, reverse0=True)

      r = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
      nisa.reciprocal(dst=r, data=d)

      y = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
      nisa.tensor_tensor(dst=y, data1=x_sb, data2=r, op=nl.multiply)

      nisa.dma_copy(dst=out[r0:r0 + P, c0:c0 + F], src=y)

  return out
