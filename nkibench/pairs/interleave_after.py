# Direction pair "interleave" (after): two independent chains per iteration, each
# alternating ScalarE (tanh, exp) and VectorE (multiply, add) instructions.
#
# Inputs (HBM, float32):
#   x   [M, N] = [2048, 1024]
# Outputs:
#   out [M, N] = exp(tanh(t6)) * x, t6 = exp(tanh(t3)) + x, t3 = exp(tanh(x)) * x
#
# AFTER: the same instructions interleaved by hand, a and b alternating.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  M, N = x.shape
  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(M // 256):
    a = nl.load(x[i * 256:i * 256 + 128, 0:N])
    b = nl.load(x[i * 256 + 128:i * 256 + 256, 0:N])
    a1 = nl.tanh(a)
    b1 = nl.tanh(b)
    a2 = nl.exp(a1)
    b2 = nl.exp(b1)
    a3 = nl.multiply(a2, a)
    b3 = nl.multiply(b2, b)
    a4 = nl.tanh(a3)
    b4 = nl.tanh(b3)
    a5 = nl.exp(a4)
    b5 = nl.exp(b4)
    a6 = nl.add(a5, a)
    b6 = nl.add(b5, b)
    a7 = nl.tanh(a6)
    b7 = nl.tanh(b6)
    a8 = nl.exp(a7)
    b8 = nl.exp(b7)
    a9 = nl.multiply(a8, a)
    b9 = nl.multiply(b8, b)
    nl.store(out[i * 256:i * 256 + 128, 0:N], value=a9)
    nl.store(out[i * 256 + 128:i * 256 + 256, 0:N], value=b9)
  return out
