import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def pick(a, b):
  # where a > b: floor(a) + ceil(b); elsewhere: mod(b, 3) - fmod(a, 2) (numpy sign conventions).
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  x = nl.load(a)
  y = nl.load(b)
  high = nl.add(nl.floor(x), nl.ceil(y))
  low = nl.subtract(nl.mod(y, 3.0), nl.fmod(x, 2.0))
  chosen = nl.where(nl.greater(x, y), high, low)
  clipped = nl.where(nl.less(chosen, -4.0), -4.0, chosen)
  nl.store(out, value=clipped)
  return out
