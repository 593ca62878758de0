# A loop that reads a whole HBM scratch tensor it also writes: the load is not
# invariant even though it names no loop variable.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=np.float32, buffer=nl.shared_hbm)
  scratch = nl.ndarray((128, 512), dtype=np.float32, buffer=nl.hbm)
  nl.store(scratch[0:128, 0:512], value=nl.load(x[0:128, 0:512]))

  for i in nl.sequential_range(4):
    cur = nl.load(scratch[0:128, 0:512])
    nl.store(scratch[0:128, 0:512], value=nl.exp(cur))

  nl.store(out[0:128, 0:512], value=nl.load(scratch[0:128, 0:512]))
  return out
