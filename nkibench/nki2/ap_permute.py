# Free-dimension permutation with explicit access patterns (.ap()), in the
# current `nki` dialect: a layout change that slices cannot express.
#
# Inputs (HBM, float32):
#   x    [P, A, B] = [128, 8, 64]
# Output:
#   out  [P, B, A] = [128, 64, 8]   out[p, j, i] = x[p, i, j] + 1
#
# Columns 0..B/2-1 of the output are permuted on chip: x is loaded as is and a
# tensor_copy reads it through x_sb.ap(pattern=[[A*B, P], [1, B/2], [B, A]])
# (per partition: j steps by 1, i steps by B). Columns B/2..B-1 are permuted by
# the DMA itself: the HBM source is x.ap(pattern=[[A*B, P], [1, B/2], [B, A]],
# offset=B/2). An access pattern is a list of [step, num] pairs, outermost
# first, over the flattened tensor; the first pair of an SBUF/PSUM pattern is
# the partition dimension with step = elements per partition.
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(x):
  P, A, B = x.shape
  assert P <= nl.tile_size.pmax and B % 2 == 0
  H = B // 2

  out = nl.ndarray((P, B, A), dtype=x.dtype, buffer=nl.shared_hbm)

  # --- first half: permutation by an engine access pattern on SBUF ---
  x_sb = nl.ndarray((P, A, B), dtype=x.dtype, buffer=nl.sbuf)
  nisa.dma_copy(dst=x_sb, src=x)
  lo = nl.ndarray((P, H, A), dtype=x.dtype, buffer=nl.sbuf)
  nisa.tensor_copy(dst=lo, src=x_sb.ap(pattern=[[A * B, P], [1, H], [B, A]], offset=0))

  # --- second half: permutation by a DMA access pattern on HBM ---
  hi = nl.ndarray((P, H, A), dtype=x.dtype, buffer=nl.sbuf)
  nisa.dma_copy(dst=hi, src=x.ap(pattern=[[A * B, P], [1, H], [B, A]], offset=H))

  lo1 = nl.ndarray((P, H, A), dtype=x.dtype, buffer=nl.sbuf)
  hi1 = nl.ndarray((P, H, A), dtype=x.dtype, buffer=nl.sbuf)
  nisa.tensor_scalar(dst=lo1, data=lo, op0=nl.add, operand0=1.0)
  nisa.tensor_scalar(dst=hi1, data=hi, op0=nl.add, operand0=1.0)

  nisa.dma_copy(dst=out[0:P, 0:H, 0:A], src=lo1)
  nisa.dma_copy(dst=out[0:P, H:B, 0:A], src=hi1)

  return out
