# Inputs of hoist-invariant-loads.test: invariant_loads.py in the current NKI dialect, its tiles
# allocated by nl.ndarray in the loop body and filled by nisa.dma_copy(dst=..., src=...).
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(xT, w):
  K, M = xT.shape
  _, N = w.shape
  out = nl.ndarray((M, N), dtype=xT.dtype, buffer=nl.shared_hbm)
  for m in nl.affine_range(M // 128):
    for n in nl.affine_range(N // 512):
      acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
      for k in nl.affine_range(K // 128):
        x_tile = nl.ndarray((128, 128), dtype=xT.dtype, buffer=nl.sbuf)
        w_tile = nl.ndarray((128, 512), dtype=w.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_tile, src=xT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
        nisa.dma_copy(dst=w_tile, src=w[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
        nisa.nc_matmul(dst=acc, stationary=x_tile, moving=w_tile)
      res = nl.ndarray((128, 512), dtype=out.dtype, buffer=nl.sbuf)
      nisa.tensor_copy(dst=res, src=acc)
      nisa.dma_copy(dst=out[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], src=res)
  return out
