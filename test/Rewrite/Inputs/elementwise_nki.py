# The elementwise chains of elementwise.py in the current nki dialect: every ISA call writes its
# destination (keyword dst= or the first positional argument).
import numpy as np
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def elementwise(x, b):
  out = nl.ndarray((128, 1024), dtype=np.float32, buffer=nl.shared_hbm)
  zero = nl.ndarray((128, 1), dtype=np.float32, buffer=nl.sbuf)
  nisa.memset(dst=zero, value=0.0)
  bias = nl.ndarray((128, 1), dtype=np.float32, buffer=nl.sbuf)
  nisa.dma_copy(dst=bias, src=b[0:128, 0:1])
  for i in nl.affine_range(2):
    t = nl.ndarray((128, 512), dtype=np.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[0:128, i * 512:(i + 1) * 512])
    e = nl.ndarray((128, 512), dtype=np.float32, buffer=nl.sbuf)
    d = nl.ndarray((128, 512), dtype=np.float32, buffer=nl.sbuf)
    r = nl.ndarray((128, 512), dtype=np.float32, buffer=nl.sbuf)
    nisa.activation(dst=e, op=nl.exp, data=t, bias=zero, scale=-1.0)
    nisa.tensor_scalar(d, e, nl.add, 1.0, reverse0=True)
    nisa.reciprocal(dst=r, data=d)
    s = nl.ndarray((128, 512), dtype=np.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=s, data1=t, data2=r, op=nl.multiply)
    u = nl.ndarray((128, 512), dtype=np.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=u, data=s, op0=nl.multiply, operand0=2.0)
    v = nl.ndarray((128, 512), dtype=np.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=v, data=u, op0=nl.add, operand0=bias)
    w = nl.ndarray((128, 512), dtype=np.float32, buffer=nl.sbuf)
    nisa.activation(w, nl.tanh, v)
    y = nl.ndarray((128, 512), dtype=np.float32, buffer=nl.sbuf)
    nisa.activation(dst=y, op=nl.exp, data=w)
    nisa.dma_copy(dst=out[0:128, i * 512:(i + 1) * 512], src=y)
  return out
