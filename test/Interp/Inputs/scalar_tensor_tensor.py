# y = (x * s) + r in one VectorE instruction per tile, in the nki dialect; z the same with the
# operands of op1 reversed: r - (x * s).
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def axpy(x, r, s):
  y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  z = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  xt = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
  rt = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
  st = nl.ndarray((x.shape[0], 1), dtype=x.dtype, buffer=nl.sbuf)
  nisa.dma_copy(dst=xt, src=x)
  nisa.dma_copy(dst=rt, src=r)
  nisa.dma_copy(dst=st, src=s)
  yt = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
  nisa.scalar_tensor_tensor(dst=yt, data=xt, op0=nl.multiply, operand0=st, op1=nl.add, operand1=rt)
  zt = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
  nisa.scalar_tensor_tensor(zt, xt, nl.multiply, st, nl.subtract, rt, reverse1=True)
  nisa.dma_copy(dst=y, src=yt)
  nisa.dma_copy(dst=z, src=zt)
  return y, z
