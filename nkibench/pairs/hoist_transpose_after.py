# Direction pair "hoist_transpose" (after): hoist_transpose_before.py rewritten by the op(s) below
# (nkibench/manifest.json, expect.ops of hoist_transpose_after).
#
# Inputs (HBM, float32):
#   x  [M, K] = [512, 512]
#   w  [K, N] = [512, 2048]   loaded once into SBUF (32 KiB per partition)
# Output:
#   out [M, N] = [512, 2048]   out = x @ w
#
# AFTER (hoist_transpose S7 out of L2): the 4 transposes of each x block are
# computed once per m into an SBUF buffer, and the products use transpose_x=True:
# 16 transposes instead of 64.
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
    x_tile_T = nl.ndarray((4, nl.par_dim(128), 128), dtype=nl.float32, buffer=nl.sbuf)
    for k in nl.affine_range(K // 128):
      x_tile_T[k, 0:128, 0:128] = nl.copy(nl.transpose(x_tile[:, k * 128:(k + 1) * 128]))
    for n in nl.affine_range(N // 512):
      res_psum = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
      for k in nl.affine_range(K // 128):
        res_psum += nl.matmul(x_tile_T[k, 0:128, 0:128], w_sb[k, 0:128, n * 512:(n + 1) * 512], transpose_x=True)
      res_sb = nl.copy(res_psum, dtype=out.dtype)
      nl.store(out[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], value=res_sb)
  return out
