# The last row tile fills only its first h rows; the reduction runs over the whole tile and only the
# h rows it computed from are stored.
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def row_sums(a):
  n, f = a.shape
  out = nl.ndarray((n, 1), dtype=nl.float32, buffer=nl.shared_hbm)
  for i in nl.affine_range((n + 127) // 128):
    r0 = i * 128
    h = min(128, n - r0)
    x = nl.ndarray((128, f), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x[0:h, 0:f], src=a[r0:r0 + h, 0:f])
    sq = nl.ndarray((128, f), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=sq, op=nl.square, data=x)
    s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=s, op=nl.add, data=sq, axis=(1,))
    nisa.dma_copy(dst=out[r0:r0 + h, 0:1], src=s[0:h, 0:1])
  return out
