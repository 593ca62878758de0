# Elementwise add of two matrices, written in the current `nki` dialect (NKI 0.3+).
#
# Inputs (HBM, float32):
#   a    [M, N] = [256, 512]
#   b    [M, N] = [256, 512]
# Output (HBM, allocated here with buffer=nl.shared_hbm and returned):
#   out  [M, N]   out = a + b
#
# Per 128-row tile: two SBUF tiles allocated with nl.ndarray, filled by
# nisa.dma_copy(dst=, src=), one tensor_tensor add (destination first), one
# dma_copy back to HBM. Rows are addressed with plain slices.
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(a, b):
  M, N = a.shape
  P = nl.tile_size.pmax
  assert M % P == 0

  out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)

  for m in nl.affine_range(M // P):
    r0 = m * P
    a_sb = nl.ndarray((P, N), dtype=a.dtype, buffer=nl.sbuf)
    b_sb = nl.ndarray((P, N), dtype=b.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a_sb, src=a[r0:r0 + P, 0:N])
    nisa.dma_copy(dst=b_sb, src=b[r0:r0 + P, 0:N])

    c_sb = nl.ndarray((P, N), dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=c_sb, data1=a_sb, data2=b_sb, op=nl.add)

    nisa.dma_copy(dst=out[r0:r0 + P, 0:N], src=c_sb)

  return out
