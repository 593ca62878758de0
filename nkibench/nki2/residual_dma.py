# Three-way residual sum computed by the DMA engines, in the current `nki`
# dialect: nisa.dma_compute(dst, srcs, reduce_op) (NKI 0.3.0; replaces the
# 0.1/0.2 dma_copy(..., dst_rmw_op=add)).
#
# Inputs (HBM, float32):
#   a    [M, N] = [256, 512]
#   b    [M, N] = [256, 512]
#   c    [M, N] = [256, 512]
# Output:
#   out  [M, N]   out = a + b + c
#
# Per 128-row tile: an SBUF accumulator made by nl.zeros, then one dma_compute
# that reads the accumulator and three HBM slices and writes their sum back to
# the accumulator (srcs may mix SBUF and HBM; reduce_op must be nl.add), then a
# dma_copy to the output. The row loop is an nl.static_range.
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(a, b, c):
  M, N = a.shape
  P = nl.tile_size.pmax
  assert M % P == 0

  out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)

  for m in nl.static_range(M // P):
    r0 = m * P
    acc = nl.zeros((P, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_compute(dst=acc, srcs=[acc, a[r0:r0 + P, 0:N], b[r0:r0 + P, 0:N],
                                    c[r0:r0 + P, 0:N]], reduce_op=nl.add)
    nisa.dma_copy(dst=out[r0:r0 + P, 0:N], src=acc)

  return out
