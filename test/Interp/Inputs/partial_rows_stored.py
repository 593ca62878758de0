# Planted bug: the same kernel stores all 128 rows of the last tile, 72 of them computed from rows
# of x that were never written.
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def row_sums(a):
  n, f = a.shape
  out = nl.ndarray((n + 128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
  for i in nl.affine_range((n + 127) // 128):
    r0 = i * 128
    h = min(128, n - r0)
    x = nl.ndarray((128, f), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x[0:h, 0:f], src=a[r0:r0 + h, 0:f])
    sq = nl.ndarray((128, f), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=sq, op=nl.square, data=x)
    s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=s, op=nl.add, data=sq, axis=(1,))
    nisa.dma_copy(dst=out[r0:r0 + 128, 0:1], src=s[0:128, 0:1])
  return out
