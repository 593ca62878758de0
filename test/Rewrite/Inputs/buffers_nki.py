# Buffers in the current nki dialect: tmp is shared by the iterations of L0 and overwritten whole by
# each, t is allocated fresh in every iteration, acc carries a value from one iteration to the next.
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def buffers(x):
  out = nl.ndarray((128, 2048), dtype=nl.float32, buffer=nl.shared_hbm)
  tmp = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
  acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
  nisa.memset(dst=acc, value=0.0)
  for j in nl.sequential_range(4):
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[0:128, j * 512:(j + 1) * 512])
    nisa.tensor_scalar(dst=tmp[0:128, 0:512], data=t, op0=nl.multiply, operand0=2.0)
    nisa.tensor_tensor(dst=acc, data1=acc, data2=tmp, op=nl.add)
    nisa.dma_copy(dst=out[0:128, j * 512:(j + 1) * 512], src=tmp)
  return out
