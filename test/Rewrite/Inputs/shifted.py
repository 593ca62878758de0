# Two loops where the second reads the blocks in reverse order: its first
# iteration needs what the LAST iteration of the first loop writes, so fusing
# them would read t_hbm before it is written.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((384, 512), dtype=np.float32, buffer=nl.shared_hbm)
  t_hbm = nl.ndarray((384, 512), dtype=np.float32, buffer=nl.hbm)

  for m in nl.affine_range(3):
    t = nl.load(x[m * 128:(m + 1) * 128, 0:512])
    nl.store(t_hbm[m * 128:(m + 1) * 128, 0:512], value=nl.exp(t))

  for m in nl.affine_range(3):
    u = nl.load(t_hbm[(2 - m) * 128:(3 - m) * 128, 0:512])
    nl.store(out[m * 128:(m + 1) * 128, 0:512], value=u)

  return out
