# A sequential pipeline: iteration i consumes block i of buf_hbm and produces
# block i + 1, so the loop cannot be split into a consumer loop followed by a
# producer loop. `first` is used in the loop and after it.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((384, 512), dtype=np.float32, buffer=nl.shared_hbm)
  buf_hbm = nl.ndarray((512, 512), dtype=np.float32, buffer=nl.hbm)
  nl.store(buf_hbm[0:128, 0:512], value=nl.load(x[384:512, 0:512]))

  first = nl.load(x[0:128, 0:512])
  for i in nl.sequential_range(3):
    a = nl.load(buf_hbm[i * 128:(i + 1) * 128, 0:512])
    nl.store(out[i * 128:(i + 1) * 128, 0:512], value=nl.add(a, first))
    # second part: produce the next block
    b = nl.load(x[i * 128:(i + 1) * 128, 0:512])
    nl.store(buf_hbm[(i + 1) * 128:(i + 2) * 128, 0:512], value=nl.exp(b))

  nl.store(out[0:128, 0:512], value=first)
  return out
