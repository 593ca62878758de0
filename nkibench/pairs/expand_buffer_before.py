# Direction pair "expand_buffer" (before): one SBUF staging buffer, allocated
# before the row loop, is reused by every iteration.
#
# Input (HBM, float32):
#   x   [M, N] = [1024, 2048]
# Output:
#   out [M, N] = [1024, 2048]   out = exp(x)
#
# BEFORE: iteration i + 1 loads into the buffer iteration i still reads, so
# the load of the next tile waits for the exp of the current one (a
# write-after-read on the buffer): load and compute of consecutive tiles do
# not overlap.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  M, N = x.shape
  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
  buf = nl.ndarray((nl.par_dim(128), N), dtype=x.dtype, buffer=nl.sbuf)
  for i in nl.sequential_range(M // 128):
    buf[0:128, 0:N] = nl.load(x[i * 128:(i + 1) * 128, 0:N])
    nl.store(out[i * 128:(i + 1) * 128, 0:N], value=nl.exp(buf[0:128, 0:N]))
  return out
