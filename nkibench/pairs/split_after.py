# Direction pair "split" (after): split_before.py rewritten by the op(s) below
# (nkibench/manifest.json, expect.ops of split_after).
#
# Input (HBM, float32):
#   x   [M, N] = [1024, 512]
# Output:
#   out [M, N] = [1024, 512]   out = 2 exp(x)
#
# AFTER (split L0 by 2): two nested loops of 4 x 2 iterations; the same
# instructions in the same order (neutral).
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  M, N = x.shape
  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
  for io in nl.affine_range(M // 128 // 2):
    for ii in nl.affine_range(2):
      t = nl.load(x[(io * 2 + ii) * 128:((io * 2 + ii) + 1) * 128, 0:N])
      y = nl.multiply(nl.exp(t), 2.0)
      nl.store(out[(io * 2 + ii) * 128:((io * 2 + ii) + 1) * 128, 0:N], value=y)
  return out
