import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a, b):
  # a, b: f32[128, 512]; out = (a - mean(a)) * (b * b) + exp(a * 0.5), the tile operators written
  # inside other expressions the way the NKI tutorials write them.
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  x = nl.load(a)
  y = nl.load(b)
  m = nl.mean(x, axis=1)
  r = (x - m) * (y * y) + nl.exp(x * 0.5)
  nl.store(out, value=r)
  return out
