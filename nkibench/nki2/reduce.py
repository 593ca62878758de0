# Two reductions of one matrix, in the current `nki` dialect: column sums on
# TensorE (partition-axis reduction) and row maxima on VectorE (free-axis
# reduction over two free dimensions). Two outputs, returned as a tuple.
#
# Inputs (HBM, float32):
#   x        [M, N] = [512, 256]
# Outputs:
#   colsum   [1, N]   colsum[0, j] = sum_i x[i, j]
#   rowmax   [M, 1]   rowmax[i, 0] = max_j x[i, j]
#
# colsum: a ones vector [128, 1] is the stationary operand, each 128-row tile
# of x the moving operand; the M/128 matmuls write the same PSUM tile [1, N]
# with the default accumulate=None (first write overwrites, later writes add).
# rowmax: the [128, N] tile is viewed as [128, 2, N/2] with .reshape and
# reduced over both free axes with tensor_reduce(axis=(1, 2)) (axis numbers are
# real tensor dimensions from NKI 0.3.0).
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(x):
  M, N = x.shape
  P = nl.tile_size.pmax
  assert M % P == 0 and N % 2 == 0 and N <= nl.tile_size.psum_fmax

  colsum = nl.ndarray((1, N), dtype=nl.float32, buffer=nl.shared_hbm)
  rowmax = nl.ndarray((M, 1), dtype=nl.float32, buffer=nl.shared_hbm)

  ones = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
  nisa.memset(dst=ones, value=1.0)

  cs_ps = nl.ndarray((1, N), dtype=nl.float32, buffer=nl.psum)

  for r in nl.affine_range(M // P):
    x_sb = nl.ndarray((P, N), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x_sb, src=x[r * P:(r + 1) * P, 0:N])

    # [1, N] += ones.T @ x_tile   (contraction over the 128 partitions)
    nisa.nc_matmul(dst=cs_ps, stationary=ones, moving=x_sb, is_stationary_onezero=True)

    rm = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=rm, op=nl.maximum, data=x_sb.reshape((P, 2, N // 2)),
                       axis=(1, 2), keepdims=False)
    nisa.dma_copy(dst=rowmax[r * P:(r + 1) * P, 0:1], src=rm)

  cs_sb = nl.ndarray((1, N), dtype=nl.float32, buffer=nl.sbuf)
  nisa.tensor_copy(dst=cs_sb, src=cs_ps)
  nisa.dma_copy(dst=colsum, src=cs_sb)

  return colsum, rowmax
