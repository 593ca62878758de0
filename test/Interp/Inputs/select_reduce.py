# Positive entries kept, the others replaced by a per-row floor; the row maxima of the result as well.
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def clamp_rows(x, floor):
  out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
  top = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.shared_hbm)
  xt = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
  nisa.dma_copy(dst=xt, src=x)
  ft = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
  nisa.dma_copy(dst=ft, src=floor)
  neg = nl.ndarray(x.shape, dtype=nl.uint8, buffer=nl.sbuf)
  nisa.tensor_scalar(dst=neg, data=xt, op0=nl.less_equal, operand0=0.0)
  y = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
  m = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
  nisa.select_reduce(dst=y, predicate=neg, on_true=xt, on_false=ft, reduce_res=m, reverse_pred=True)
  nisa.dma_copy(dst=out, src=y)
  nisa.dma_copy(dst=top, src=m)
  return out, top
