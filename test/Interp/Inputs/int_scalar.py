import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a, n_tiles, scale):
  # n_tiles is a Python int at call time (a trip count and slice bounds); scale a float
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  rows = a.shape[0] // n_tiles
  for i in nl.affine_range(n_tiles):
    t = nl.load(a[i * rows:(i + 1) * rows, :])
    nl.store(out[i * rows:(i + 1) * rows, :], value=nl.multiply(t, scale))
  return out
