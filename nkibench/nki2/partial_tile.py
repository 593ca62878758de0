# Leaky-ReLU plus residual on a matrix whose sizes are not multiples of the
# tile size, in the current `nki` dialect: the last row tile and the last
# column tile are partial, handled with bounded slices (min) instead of mask=.
#
# Inputs (HBM, float32):
#   x    [M, N] = [320, 600]     320 = 2*128 + 64 rows, 600 = 512 + 88 columns
#   y    [M, N] = [320, 600]
# Output:
#   out  [M, N]   out = max(x, 0.1 * x) + y
#
# SBUF tiles are allocated at full size [128, 512]; every instruction works on
# the sub-tile [0:np_, 0:nf] and every DMA on the matching HBM slice, where
# np_ = min(M, r0 + 128) - r0 and nf = min(N, c0 + 512) - c0. Plain Python
# range loops (real loops since NKI 0.2.0) and nl.static_range (fully unrolled)
# are both used.
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(x, y):
  M, N = x.shape
  P = nl.tile_size.pmax
  F = 512
  n_row_tiles = (M + P - 1) // P
  n_col_tiles = (N + F - 1) // F

  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)

  for m in range(n_row_tiles):
    r0 = m * P
    r1 = min(M, r0 + P)
    np_ = r1 - r0
    for n in nl.static_range(n_col_tiles):
      c0 = n * F
      c1 = min(N, c0 + F)
      nf = c1 - c0

      x_sb = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
      y_sb = nl.ndarray((P, F), dtype=y.dtype, buffer=nl.sbuf)
      nisa.dma_copy(dst=x_sb[0:np_, 0:nf], src=x[r0:r1, c0:c1])
      nisa.dma_copy(dst=y_sb[0:np_, 0:nf], src=y[r0:r1, c0:c1])

      xs = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
      nisa.tensor_scalar(dst=xs[0:np_, 0:nf], data=x_sb[0:np_, 0:nf],
                         op0=nl.multiply, operand0=0.1)
      lr = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
      nisa.tensor_tensor(dst=lr[0:np_, 0:nf], data1=x_sb[0:np_, 0:nf],
                         data2=xs[0:np_, 0:nf], op=nl.maximum)
      o_sb = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
      nisa.tensor_tensor(dst=o_sb[0:np_, 0:nf], data1=lr[0:np_, 0:nf],
                         data2=y_sb[0:np_, 0:nf], op=nl.add)

      nisa.dma_copy(dst=out[r0:r1, c0:c1], src=o_sb[0:np_, 0:nf])

  return out
