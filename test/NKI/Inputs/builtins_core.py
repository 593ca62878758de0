import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILES = [128, 128]


@nki.jit
def kernel(a):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  rows = sum(TILES)
  assert rows == a.shape[0], "rows " + str(rows)
  n = round(rows / 128)
  for i in nl.affine_range(n):
    t = nl.load(a[i * 128 + nl.arange(128)[:, None], nl.arange(a.shape[1])[None, :]])
    nl.store(out[i * 128 + nl.arange(128)[:, None], nl.arange(a.shape[1])[None, :]], value=t)
  return out
