# Direction pair "set_engine" (before): 1 / (x + 1) with both instructions on
# VectorE while ScalarE idles.
#
# Input (HBM, bfloat16):
#   x   [M, N] = [512, 2048]
# Output:
#   out [M, N] = [512, 2048]   out = 1 / (x + 1), float32
#
# BEFORE: per [128 x 2048] tile VectorE runs N + 3.4 N cycles (tensor_scalar,
# reciprocal; lib/Perf/targets/trn1.json).
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
    d = nisa.tensor_scalar(data=t, op0=nl.add, operand0=1.0, dtype=np.float32)
    r = nisa.reciprocal(data=d, dtype=np.float32)
    nl.store(out[i * 128:(i + 1) * 128, 0:N], value=r)
  return out
