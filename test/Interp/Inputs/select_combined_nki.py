# The nki dialect: a 0.1 pred= of two comparisons left in a destination-passing nisa.affine_select.
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def combined_select(x):
  out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
  t = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
  nisa.dma_copy(dst=t, src=x)
  m = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
  nisa.affine_select(m, pred=(nl.arange(128)[:, None] >= nl.arange(128)[None, :]) & (nl.arange(128)[:, None] < 64),
                     on_true_tile=t, on_false_value=0.0)
  nisa.dma_copy(dst=out, src=m)
  return out
