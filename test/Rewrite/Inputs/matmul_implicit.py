# Inputs of hoist_transpose tests (x: f32[256, 256], w: f32[256, 1024]; result
# f32[256, 1536]): each
# nl.matmul without transpose_x pays a TensorE transpose of its x operand, the same
# one for every n.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, w):
  M, K = x.shape
  _, N = w.shape
  result = nl.ndarray((M, N + 512), dtype=x.dtype, buffer=nl.shared_hbm)
  for m in nl.affine_range(M // 128):
    x_tile = nl.load(x[m * 128:(m + 1) * 128, 0:K])
    y_tile = nl.multiply(x_tile, 2.0)
    for n in nl.affine_range(N // 512):
      res_psum = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
      for k in nl.affine_range(K // 128):
        w_tile = nl.load(w[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
        res_psum += nl.matmul(y_tile[:, k * 128:(k + 1) * 128], w_tile)
      res_sb = nl.copy(res_psum, dtype=result.dtype)
      nl.store(result[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], value=res_sb)
    # The second product loads its x operand inside the loop: nothing to hoist.
    for n2 in nl.affine_range(1):
      z_tile = nl.load(x[m * 128:(m + 1) * 128, 0:128])
      w2 = nl.load(w[0:128, n2 * 512:(n2 + 1) * 512])
      out2 = nl.matmul(z_tile, w2)
      nl.store(result[m * 128:(m + 1) * 128, N + n2 * 512:N + (n2 + 1) * 512], value=nl.copy(out2, dtype=result.dtype))
  return result
