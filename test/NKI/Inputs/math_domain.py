import math
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  scale = math.sqrt(a.shape[0] - 256)
  nl.store(out, value=nl.multiply(nl.load(a), scale))
  return out
