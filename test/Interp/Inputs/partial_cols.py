import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def kernel(a, b):
  # a, b: f32[128, 300]; out = (a + b) * 2 in column tiles of 256: the 2nd tile's columns 300..511
  # are masked on load and store, the add and the multiply in between are not
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  ip = nl.arange(128)[:, None]
  jf = nl.arange(256)[None, :]
  for j in nl.affine_range(2):
    x = nl.load(a[ip, j * 256 + jf], mask=(j * 256 + jf < 300))
    y = nl.load(b[ip, j * 256 + jf], mask=(j * 256 + jf < 300))
    s = nl.multiply(nl.add(x, y), 2.0)
    nl.store(out[ip, j * 256 + jf], value=s, mask=(j * 256 + jf < 300))
  return out
