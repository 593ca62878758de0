# The 0.1 dialect: nl.add given its x both by position and by keyword.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def add_twice(a):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  t = nl.load(a)
  nl.store(out, value=nl.add(t, 1.0, x=t))
  return out
