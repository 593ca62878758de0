import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(lhsT, rhs):
  # lhsT: f32[256, 128], rhs: f32[256, 512]; the current dialect's lists of tiles: the K tiles of
  # both operands are loaded into lists by `append` in one loop, the matmuls read them by index.
  K, M = lhsT.shape
  _, N = rhs.shape
  result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
  lhs_tiles = []
  rhs_tiles = []
  for k in nl.affine_range(K // 128):
    lt = nl.ndarray((128, M), dtype=lhsT.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=lt, src=lhsT[k * 128:(k + 1) * 128, 0:M])
    lhs_tiles.append(lt)
    rt = nl.ndarray((128, N), dtype=rhs.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=rt, src=rhs[k * 128:(k + 1) * 128, 0:N])
    rhs_tiles.append(rt)
  acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
  for k in nl.affine_range(K // 128):
    nisa.nc_matmul(dst=acc, stationary=lhs_tiles[k], moving=rhs_tiles[k])
  res = nl.ndarray((M, N), dtype=result.dtype, buffer=nl.sbuf)
  nisa.tensor_copy(dst=res, src=acc)
  nisa.dma_copy(dst=result, src=res)
  return result
