# A kernel the verifier already rejects (every affine_range iteration writes all
# of `last`). Rewrites may keep that error but must not add new ones.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=np.float32, buffer=nl.shared_hbm)
  last = nl.ndarray((nl.par_dim(128), 512), dtype=np.float32, buffer=nl.sbuf)
  for i in nl.affine_range(4):
    last[0:128, 0:512] = nl.load(x[0:128, 512 * i:512 * i + 512])
  nl.store(out[0:128, 0:512], value=last)
  return out
