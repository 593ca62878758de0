# Direction pair "interchange" (after): interchange_before.py rewritten by the op(s) below
# (nkibench/manifest.json, expect.ops of interchange_after).
#
# Input (HBM, float32):
#   x   [M, N] = [512, 2048]
# Output:
#   out [M, N] = [512, 2048]   out = x * x + 1
#
# AFTER (interchange L0 L1): column blocks outside, rows inside; the same
# 16 independent tiles (neutral).
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  M, N = x.shape
  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
  for j in nl.affine_range(N // 512):
    for i in nl.affine_range(M // 128):
      t = nl.load(x[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
      y = nl.add(nl.multiply(t, t), 1.0)
      nl.store(out[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], value=y)
  return out
