# The getting-started form of the imports: `from neuronxcc import nki`.
from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def add(a, b):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  nl.store(out, value=nl.add(nl.load(a), nl.load(b)))
  return out
