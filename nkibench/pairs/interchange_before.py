# Direction pair "interchange" (before): a 2-D nest of tiles, rows outside,
# column blocks inside; every iteration loads, scales and stores one tile.
#
# Input (HBM, float32):
#   x   [M, N] = [512, 2048]
# Output:
#   out [M, N] = [512, 2048]   out = x * x + 1
#
# BEFORE: for i (4 row tiles): for j (4 column blocks of 512).
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  M, N = x.shape
  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(M // 128):
    for j in nl.affine_range(N // 512):
      t = nl.load(x[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
      y = nl.add(nl.multiply(t, t), 1.0)
      nl.store(out[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], value=y)
  return out
