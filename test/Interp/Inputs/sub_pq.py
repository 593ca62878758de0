import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(p, q):
  out = nl.ndarray(p.shape, dtype=p.dtype, buffer=nl.shared_hbm)
  nl.store(out, value=nl.subtract(nl.load(p), nl.load(q)))
  return out
