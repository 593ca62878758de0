import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def kernel(a):
  # a: f32[128, 512]; out = a * 3, column tiles of 256 addressed through the fields of one mgrid
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  g = nl.mgrid[0:128, 0:256]
  for j in nl.affine_range(2):
    t = nl.load(a[g.p, j * 256 + g.x])
    nl.store(out[g.p, j * 256 + g.x], value=nl.multiply(t, 3.0))
  return out
