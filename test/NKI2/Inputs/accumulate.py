# nc_matmul's accumulate= in the nki dialect, three PSUM tiles written twice each with a.T @ b:
#   over = accumulate=False both times -> a.T @ b
#   auto = accumulate=None (default)  -> first write overwrites, second adds: 2 a.T @ b
#   add  = False, then True           -> 2 a.T @ b
# Output: [3, 128, 128] = (over, auto, add).
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(a, b):
  out = nl.ndarray((3, 128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
  a_sb = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
  b_sb = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
  nisa.dma_copy(dst=a_sb, src=a)
  nisa.dma_copy(dst=b_sb, src=b)
  over = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
  auto = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
  add = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
  for i in nl.sequential_range(2):
    nisa.nc_matmul(dst=over, stationary=a_sb, moving=b_sb, accumulate=False)
    nisa.nc_matmul(over, a_sb, b_sb, accumulate=False)
    nisa.nc_matmul(dst=auto, stationary=a_sb, moving=b_sb)
    nisa.nc_matmul(dst=add, stationary=a_sb, moving=b_sb, accumulate=(i > 0))
  tiles = [over, auto, add]
  for t in range(3):
    res = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=tiles[t])
    nisa.dma_copy(dst=out[t], src=res)
  return out
