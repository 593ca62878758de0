# Three loops; the first two touch the same rows in the same iteration (fusable,
# the second's `q` becomes `m`), the third has another trip count.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((512, 512), dtype=np.float32, buffer=nl.shared_hbm)
  t_hbm = nl.ndarray((512, 512), dtype=np.float32, buffer=nl.hbm)

  for m in nl.affine_range(4):
    t = nl.load(x[m * 128:(m + 1) * 128, 0:512])
    nl.store(t_hbm[m * 128:(m + 1) * 128, 0:512], value=nl.exp(t))

  # second pass
  for q in nl.affine_range(4):
    u = nl.load(t_hbm[q * 128:(q + 1) * 128, 0:512])
    nl.store(out[q * 128:(q + 1) * 128, 0:512], value=u)

  for r in nl.affine_range(2):
    v = nl.load(out[r * 128:(r + 1) * 128, 0:512])
    nl.store(out[r * 128:(r + 1) * 128, 0:512], value=nl.exp(v))
  return out
