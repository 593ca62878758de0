# Matrix transpose on TensorE, in the current `nki` dialect.
#
# Inputs (HBM, float32):
#   x    [M, N] = [256, 384]
# Output:
#   out  [N, M]   out = x.T
#
# A 128x128 fp32 identity is generated on chip: nisa.iota writes j - p
# (pattern [[1, 128]], channel_multiplier=-1) and tensor_scalar(op0=equal, 0.0)
# turns it into 1.0 on the diagonal, 0.0 elsewhere. Each 128x128 block is
# transposed by nisa.nc_matmul(dst=psum, stationary=block, moving=identity,
# is_moving_onezero=True, is_transpose=True) (dst = block.T @ I), evicted with
# tensor_copy and written to the mirrored block of `out`.
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(x):
  M, N = x.shape
  P = nl.tile_size.pmax
  assert M % P == 0 and N % P == 0

  out = nl.ndarray((N, M), dtype=x.dtype, buffer=nl.shared_hbm)

  diff = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
  nisa.iota(dst=diff, pattern=[[1, P]], offset=0, channel_multiplier=-1)
  ident = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
  nisa.tensor_scalar(dst=ident, data=diff, op0=nl.equal, operand0=0.0)

  for i in nl.affine_range(M // P):
    x_sb = nl.ndarray((P, N), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x_sb, src=x[i * P:(i + 1) * P, 0:N])

    for j in nl.affine_range(N // P):
      t_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
      nisa.nc_matmul(dst=t_ps, stationary=x_sb[0:P, j * P:(j + 1) * P], moving=ident,
                     is_moving_onezero=True, is_transpose=True)

      t_sb = nl.ndarray((P, P), dtype=x.dtype, buffer=nl.sbuf)
      nisa.tensor_copy(dst=t_sb, src=t_ps)
      nisa.dma_copy(dst=out[j * P:(j + 1) * P, i * P:(i + 1) * P], src=t_sb)

  return out
