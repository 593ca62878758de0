import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def kernel(a):
  # a: f32[200, 64]; rows 200..255 of the 2nd tile are masked on load, but the store of the
  # 2nd tile is not: the undefined rows reach the output through the exp
  out = nl.ndarray((256, 64), dtype=a.dtype, buffer=nl.shared_hbm)
  ix = nl.arange(128)[:, None]
  iy = nl.arange(64)[None, :]
  for i in nl.affine_range(2):
    t = nl.load(a[i * 128 + ix, iy], mask=(i * 128 + ix < 200))
    nl.store(out[i * 128 + ix, iy], value=nl.exp(t))
  return out
