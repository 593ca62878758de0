# The nki dialect: nisa.affine_select without its channel_multiplier, and with an argument too many.
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def arity_select(x):
  out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
  t = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
  nisa.dma_copy(dst=t, src=x)
  m = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
  nisa.affine_select(m, [[-1, 128]], 0, on_true_tile=t, on_false_value=0.0, cmp_op=nl.greater_equal)
  nisa.affine_select(m, [[-1, 128]], 0, 1, t, 0.0, nl.greater_equal, "sel", 3)
  nisa.dma_copy(dst=out, src=m)
  return out
