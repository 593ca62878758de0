# Direction pair "compute_at" (after): compute_at_before.py rewritten by the op(s) below
# (nkibench/manifest.json, expect.ops of compute_at_after).
#
# Input (HBM, float32):
#   x   [M, N] = [1024, 7168]   28 MiB
# Output:
#   out [M, N] = [1024, 7168]   out = 2 exp(x)
#
# AFTER (compute_at L2 at L1): each row tile is stored right after it is
# computed; only one block of e is live at a time, nothing spills.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  M, N = x.shape
  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
  e = nl.ndarray((M // 128, nl.par_dim(128), N), dtype=nl.float32, buffer=nl.sbuf)
  for m in nl.affine_range(M // 128):
    for h in nl.affine_range(2):
      t = nl.load(x[m * 128:(m + 1) * 128, h * (N // 2):(h + 1) * (N // 2)])
      e[m, 0:128, h * (N // 2):(h + 1) * (N // 2)] = nl.exp(t)
    nl.store(out[m * 128:(m + 1) * 128, 0:N], value=nl.multiply(e[m, 0:128, 0:N], 2.0))
  return out
