import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import numpy as np


@nki.jit
def kernel(a):
  # a: f32[128, 1000]; out = a + 1 in masked chunks of 512: a 2-D nl.mgrid index next to a 3-D one (layernorm tutorial v2)
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  i_p, i_f, i_one = nl.mgrid[0:128, 0:1000, 0:1]
  t = nl.load(a[i_p, i_f])
  i_c, i_s = nl.mgrid[0:512, 0:6]
  res = nl.ndarray((128, 1000), dtype=np.float32)
  for j in nl.affine_range(2):
    res[i_p, j * 512 + i_c] = nl.add(t[i_p, j * 512 + i_c], 1.0, mask=(j * 512 + i_c < 1000))
  nl.store(out[i_p, i_f], value=res[i_p, i_f])
  return out
