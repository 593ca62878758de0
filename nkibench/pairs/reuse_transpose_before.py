# Direction pair "reuse_transpose" (before, compiler effect scheduler.reuse_invariant_transposes):
# nl.matmul transposes its x operand on TensorE before every product (NKI.md §1.8), and the
# compiler does not reuse that implicit transpose (NKIBench matmul_add_rmsnorm and
# add_rmsnorm_matmul do all of theirs on trn1): the same x block is transposed again for every n.
#
# Inputs (HBM, float32):
#   x  [M, K] = [512, 512]
#   w  [K, N] = [512, 2048]   loaded once into SBUF (32 KiB per partition)
# Output:
#   out [M, N] = [512, 2048]   out = x @ w
#
# BEFORE: 4 (m) x 4 (n) x 4 (k) = 64 fp32 TensorE transposes of [128 x 128].
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, w):
  M, K = x.shape
  _, N = w.shape
  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
  w_sb = nl.ndarray((K // 128, nl.par_dim(128), N), dtype=w.dtype, buffer=nl.sbuf)
  for kw in nl.affine_range(K // 128):
    w_sb[kw, 0:128, 0:N] = nl.load(w[kw * 128:(kw + 1) * 128, 0:N])
  for m in nl.affine_range(M // 128):
    x_tile = nl.load(x[m * 128:(m + 1) * 128, 0:K])
    for n in nl.affine_range(N // 256):
      res_psum = nl.zeros((128, 256), nl.float32, buffer=nl.psum)
      for k in nl.affine_range(K // 128):
        res_psum += nl.matmul(x_tile[:, k * 128:(k + 1) * 128], w_sb[k, 0:128, n * 256:(n + 1) * 256])
      res_sb = nl.copy(res_psum, dtype=out.dtype)
      nl.store(out[m * 128:(m + 1) * 128, n * 256:(n + 1) * 256], value=res_sb)
  return out
