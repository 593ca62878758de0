# Row tiles in groups of two: the inner range's bound min(t0 + 2, n) is one number when the outer loop
# has one iteration.
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def grouped(a):
  n_rows, n_cols = a.shape
  n_tiles = n_rows // 128
  out = nl.ndarray((n_rows, n_cols), dtype=a.dtype, buffer=nl.shared_hbm)
  for t0 in range(0, n_tiles, 2):
    for t in range(t0, min(t0 + 2, n_tiles)):
      x = nl.ndarray((128, n_cols), dtype=a.dtype, buffer=nl.sbuf)
      nisa.dma_copy(dst=x, src=a[t * 128:(t + 1) * 128, 0:n_cols])
      nisa.dma_copy(dst=out[t * 128:(t + 1) * 128, 0:n_cols], src=x)
  return out
