# Row windows whose size changes with an unrolled (static_range) loop: 32 rows, then 96.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def grow(x):
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.static_range(2):
    lo = i * 32
    hi = lo + 32 + i * 64
    t = nl.load(x[lo:hi, :])
    nl.store(out[lo:hi, :], value=nl.multiply(t, 2.0))
  return out
