# RUN: %accelopt check --no-source %s --inputs 'a=f32[200,128]' | %FileCheck %s
# A slice whose bound differs between iterations (g[0:n, 0:n], n = min(128, rows - r0) of a partial last
# tile) is one axis of the tile with an unknown extent: the matmul's result is [n, 1] like its dst, never
# a [1, 1] tile (a false dst-shape error).
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(a):
  rows = a.shape[0]
  out = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.shared_hbm)
  g = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
  nisa.memset(dst=g, value=1.0)
  for t in range((rows + 127) // 128):
    r0 = t * 128
    n = min(128, rows - r0)
    x = nl.ndarray((n, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a[r0:r0 + n, 0:1])
    ps = nl.ndarray((n, 1), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=ps, stationary=g[0:n, 0:n], moving=x, accumulate=False)
    y = nl.ndarray((n, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=y, src=ps)
    nisa.dma_copy(dst=out[r0:r0 + n, 0:1], src=y)
  return out
# CHECK-NOT: error
# CHECK: varying-slices.py: 1 kernel, 0 errors
