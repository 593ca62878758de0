# The nki dialect: nisa.affine_select calls the GpSimd engine cannot run.
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def pattern_select(x):
  out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
  t = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
  nisa.dma_copy(dst=t, src=x)
  m = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
  nisa.affine_select(m, pattern=[[-1, 128, 1]], offset=0, channel_multiplier=1, on_true_tile=t,
                     on_false_value=0.0, cmp_op=nl.greater_equal)
  nisa.dma_copy(dst=out, src=m)
  return out
