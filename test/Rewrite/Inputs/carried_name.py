# A sequential loop carrying a trace-time offset from one iteration to the next.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((512, 512), dtype=np.float32, buffer=nl.shared_hbm)
  off = 0
  for i in nl.sequential_range(4):
    t = nl.load(x[off:off + 128, 0:512])
    nl.store(out[i * 128:(i + 1) * 128, 0:512], value=t)
    off = off + 128
  return out
