# An SPMD kernel in the current dialect that returns nothing: each program of a 2 x 2 grid computes one
# 128 x 512 block of A_T.T @ B into the argument `result` (the style of the samples' SPMD matmul).
import nki.language as nl
import nki.isa as nisa


def matmul_blocks(A_T, B, result):
  i_m = nl.program_id(0) * 128
  i_n = nl.program_id(1) * 512
  a_sb = nl.ndarray((128, 128), dtype=A_T.dtype, buffer=nl.sbuf)
  b_sb = nl.ndarray((128, 512), dtype=B.dtype, buffer=nl.sbuf)
  nisa.dma_copy(dst=a_sb, src=A_T[0:128, i_m:i_m + 128])
  nisa.dma_copy(dst=b_sb, src=B[0:128, i_n:i_n + 512])
  acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
  nisa.nc_matmul(dst=acc, stationary=a_sb, moving=b_sb)
  res_sb = nl.ndarray((128, 512), dtype=result.dtype, buffer=nl.sbuf)
  nisa.tensor_copy(dst=res_sb, src=acc)
  nisa.dma_copy(dst=result[i_m:i_m + 128, i_n:i_n + 512], src=res_sb)
