import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a, b):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  nl.store(out, value=nl.subtract(nl.load(a), nl.load(b)))
  return out
