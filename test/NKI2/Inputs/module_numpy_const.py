# The current dialect: a module-level numpy array (np.full of module constants) read by the kernel.
import numpy as np
import nki
import nki.isa as nisa
import nki.language as nl

P = 128
FILL = np.full((P, 1), 2.0)
UNUSED = np.zeros((P, 4))


@nki.jit
def add_fill(a):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  a_sb = nl.ndarray((P, 64), dtype=a.dtype, buffer=nl.sbuf)
  nisa.dma_copy(dst=a_sb, src=a[0:P, 0:64])
  nisa.tensor_scalar(dst=a_sb, data=a_sb, op0=nl.add, operand0=FILL[0, 0])
  nisa.dma_copy(dst=out[0:P, 0:64], src=a_sb)
  return out
