# Direction pair "fission" (after): fission_before.py rewritten by the op(s) below
# (nkibench/manifest.json, expect.ops of fission_after).
#
# Inputs (HBM, float32):
#   x    [M, N] = [1024, 512]
#   y    [M, N] = [1024, 512]
# Outputs:
#   out0 [M, N] = exp(x)
#   out1 [M, N] = x * y
#
# AFTER (fission L0 at S5): one loop per output; the same instructions, all
# iterations independent (neutral).
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, y):
  M, N = x.shape
  out0 = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
  out1 = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(M // 128):
    a = nl.load(x[i * 128:(i + 1) * 128, 0:N])
    nl.store(out0[i * 128:(i + 1) * 128, 0:N], value=nl.exp(a))
  for i in nl.affine_range(M // 128):
    b = nl.load(x[i * 128:(i + 1) * 128, 0:N])
    c = nl.load(y[i * 128:(i + 1) * 128, 0:N])
    nl.store(out1[i * 128:(i + 1) * 128, 0:N], value=nl.multiply(b, c))
  return out0, out1
