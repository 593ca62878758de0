# A call giving `dst` both by position and by keyword (Python's TypeError "got multiple values").
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def copy_twice(a):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
  u = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
  nisa.dma_copy(u, dst=t, src=a)
  nisa.dma_copy(dst=out, src=t)
  return out
