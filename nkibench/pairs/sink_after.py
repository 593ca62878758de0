# Direction pair "sink" (after): sink_before.py rewritten by the op(s) below
# (nkibench/manifest.json, expect.ops of sink_after).
#
# Inputs (HBM, bfloat16):
#   x     [M, N] = [512, 2048]
#   scale [128, N] = [128, 2048]   one row tile, the same for every row tile of x
# Output:
#   out   [M, N] = [512, 2048]     out = x / scale (per row tile), bfloat16
#
# AFTER (sink S3 into L0): the invariant reciprocal is written inside the
# loop; the compiler's loop-invariant code motion computes it once again
# (scheduler.hoist_invariant_compute), so it is neutral; without that effect
# it would run in every iteration, 4 x 3.4 N VectorE cycles (slower).
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(x, scale):
  M, N = x.shape
  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
  s_tile = nl.load(scale[0:128, 0:N])
  for i in nl.affine_range(M // 128):
    inv = nisa.reciprocal(data=s_tile, dtype=np.float32)
    t = nl.load(x[i * 128:(i + 1) * 128, 0:N])
    y = nl.multiply(t, inv, dtype=x.dtype)
    nl.store(out[i * 128:(i + 1) * 128, 0:N], value=y)
  return out
