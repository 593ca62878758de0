# A recurrence h[:, t] = a[:, t] * h[:, t-1] + b[:, t] from h[:, -1] = 0.5 over the whole free axis,
# and a scan whose operand is a slice.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(a, b):
  P, T = a.shape
  out = nl.ndarray((P, T), dtype=np.float32, buffer=nl.shared_hbm)
  a_t = nl.load(a[0:P, 0:T])
  b_t = nl.load(b[0:P, 0:T])
  h = nisa.tensor_tensor_scan(a_t, b_t, initial=0.5, op0=np.multiply, op1=np.add)
  g = nisa.tensor_tensor_scan(a_t[0:P, 0:T], b_t, initial=0.0, op0=np.multiply, op1=np.add)
  y = nl.add(h, g)
  nl.store(out[0:P, 0:T], value=y)
  return out
