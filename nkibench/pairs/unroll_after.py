# Direction pair "unroll" (after): unroll_before.py rewritten by the op(s) below
# (nkibench/manifest.json, expect.ops of unroll_after).
#
# Input (HBM, float32):
#   x   [M, N] = [1024, 512]
# Output:
#   out [M, N] = [1024, 512]   out = 2 exp(x)
#
# AFTER (unroll L0 by 2): 4 iterations of a body written twice; the same
# instructions in the same order (neutral).
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  M, N = x.shape
  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
  for io in nl.affine_range(M // 128 // 2):
    t = nl.load(x[(io * 2) * 128:((io * 2) + 1) * 128, 0:N])
    y = nl.multiply(nl.exp(t), 2.0)
    nl.store(out[(io * 2) * 128:((io * 2) + 1) * 128, 0:N], value=y)
    t = nl.load(x[(io * 2 + 1) * 128:((io * 2 + 1) + 1) * 128, 0:N])
    y = nl.multiply(nl.exp(t), 2.0)
    nl.store(out[(io * 2 + 1) * 128:((io * 2 + 1) + 1) * 128, 0:N], value=y)
  return out
