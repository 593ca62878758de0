# Direction pair "substitute" (before): sigmoid computed as a chain of three
# instructions, exp(-x) on ScalarE, +1 and reciprocal on VectorE.
#
# Input (HBM, bfloat16):
#   x   [M, N] = [512, 2048]
# Output:
#   out [M, N] = [512, 2048]   out = 1 / (1 + exp(-x)), float32
#
# BEFORE: per [128 x 2048] tile, ScalarE N cycles (exp) and VectorE N + 3.4 N
# cycles (tensor_scalar add, reciprocal) (target file lib/Perf/targets/trn1.json).
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
    e = nl.ndarray((128, N), dtype=np.float32, buffer=nl.sbuf)
    d = nl.ndarray((128, N), dtype=np.float32, buffer=nl.sbuf)
    r = nl.ndarray((128, N), dtype=np.float32, buffer=nl.sbuf)
    e[...] = nisa.activation(op=nl.exp, data=t, scale=-1.0, dtype=np.float32)
    d[...] = nisa.tensor_scalar(data=e, op0=nl.add, operand0=1.0, dtype=np.float32)
    r[...] = nisa.reciprocal(data=d, dtype=np.float32)
    nl.store(out[i * 128:(i + 1) * 128, 0:N], value=r)
  return out
