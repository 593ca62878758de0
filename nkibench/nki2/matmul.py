# Tiled matmul with explicit PSUM accumulation over K, in the current `nki` dialect.
#
# Inputs (HBM, float32):
#   aT   [K, M] = [512, 256]    left operand, already transposed (contraction on rows)
#   b    [K, N] = [512, 1024]
# Output:
#   out  [M, N]   out = aT.T @ b
#
# For each output tile [128, 512]: a PSUM tile allocated with
# nl.ndarray(buffer=nl.psum) (one 2 KiB bank per partition = 512 fp32), then
# K/128 calls nisa.nc_matmul(dst=psum, stationary=aT tile [128, 128],
# moving=b tile [128, 512], accumulate=...): the first call overwrites
# (accumulate=False), the later ones add into the bank (accumulate=True).
# The PSUM tile is evicted to SBUF with tensor_copy (dma_copy cannot read PSUM
# from NKI 0.3.0) and stored with dma_copy.
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(aT, b):
  K, M = aT.shape
  K2, N = b.shape
  assert K == K2
  TK = nl.tile_size.pmax                   # 128, contraction per matmul
  TM = nl.tile_size.gemm_stationary_fmax   # 128
  TN = nl.tile_size.gemm_moving_fmax       # 512
  assert K % TK == 0 and M % TM == 0 and N % TN == 0

  out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)

  for m in nl.affine_range(M // TM):
    for n in nl.affine_range(N // TN):
      acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)

      for k in nl.affine_range(K // TK):
        a_sb = nl.ndarray((TK, TM), dtype=aT.dtype, buffer=nl.sbuf)
        b_sb = nl.ndarray((TK, TN), dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a_sb, src=aT[k * TK:(k + 1) * TK, m * TM:(m + 1) * TM])
        nisa.dma_copy(dst=b_sb, src=b[k * TK:(k + 1) * TK, n * TN:(n + 1) * TN])
        nisa.nc_matmul(dst=acc, stationary=a_sb, moving=b_sb, accumulate=(k > 0))

      res = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.sbuf)
      nisa.tensor_copy(dst=res, src=acc)
      nisa.dma_copy(dst=out[m * TM:(m + 1) * TM, n * TN:(n + 1) * TN], src=res)

  return out
