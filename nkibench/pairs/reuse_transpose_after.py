# Direction pair "reuse_transpose" (after): the same loops with the transpose written out
# (nisa.nc_transpose of the loaded x block, then nc_matmul), where it stands in before: the
# compiler computes an explicit transpose of a loaded tile once for the loops its address does
# not depend on (n), so only the 4 (m) x 4 (k) = 16 transposes run; the PSUM -> SBUF copies
# of the transposed blocks stay in the n loop.
#
# Inputs (HBM, float32):
#   x  [M, K] = [512, 512]
#   w  [K, N] = [512, 2048]   loaded once into SBUF (32 KiB per partition)
# Output:
#   out [M, N] = [512, 2048]   out = x @ w
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


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
      xT_psum = nl.ndarray((nl.par_dim(128), K), dtype=nl.float32, buffer=nl.psum)
      for k in nl.affine_range(K // 128):
        xT_psum[0:128, k * 128:(k + 1) * 128] = nisa.nc_transpose(x_tile[:, k * 128:(k + 1) * 128])
      xT = nl.copy(xT_psum)
      res_psum = nl.zeros((128, 256), nl.float32, buffer=nl.psum)
      for k in nl.affine_range(K // 128):
        res_psum += nisa.nc_matmul(xT[0:128, k * 128:(k + 1) * 128], w_sb[k, 0:128, n * 256:(n + 1) * 256])
      res_sb = nl.copy(res_psum, dtype=out.dtype)
      nl.store(out[m * 128:(m + 1) * 128, n * 256:(n + 1) * 256], value=res_sb)
  return out
