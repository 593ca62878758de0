# Direction pair "chunk_scan" (before): one scan over the whole free axis.
#
# Inputs (HBM, float32):
#   a, b  [128, 2048]
# Output:
#   out   [128, 2048]   out[:, i] = a[:, i] * out[:, i - 1] + b[:, i], out[:, -1] = 0
#
# BEFORE: one VectorE tensor_tensor_scan of 2048 elements per partition.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(a, b):
  P, N = a.shape
  out = nl.ndarray((P, N), dtype=a.dtype, buffer=nl.shared_hbm)
  a_t = nl.load(a[0:128, 0:2048])
  b_t = nl.load(b[0:128, 0:2048])
  h = nisa.tensor_tensor_scan(a_t, b_t, initial=0.0, op0=np.multiply, op1=np.add)
  nl.store(out[0:128, 0:2048], value=h)
  return out
