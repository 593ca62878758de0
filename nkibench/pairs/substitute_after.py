# Direction pair "substitute" (after): substitute_before.py rewritten by the op(s) below
# (nkibench/manifest.json, expect.ops of substitute_after).
#
# Input (HBM, bfloat16):
#   x   [M, N] = [512, 2048]
# Output:
#   out [M, N] = [512, 2048]   out = 1 / (1 + exp(-x)), float32
#
# AFTER (substitute S8 sigmoid): one ScalarE activation(sigmoid), N cycles per
# tile; VectorE is free.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(x):
  M, N = x.shape
  out = nl.ndarray((M, N), dtype=np.float32, buffer=nl.shared_hbm)
  for i in nl.affine_range(M // 128):
    t = nl.load(x[i * 128:(i + 1) * 128, 0:N])
    r = nl.ndarray((128, N), dtype=np.float32, buffer=nl.sbuf)
    r[...] = nisa.activation(op=nl.sigmoid, data=t, dtype=np.float32)
    nl.store(out[i * 128:(i + 1) * 128, 0:N], value=r)
  return out
