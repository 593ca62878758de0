import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def kernel(a):
  # a: f32[200, 96]; each row scaled by 1/mean(row^2), in row tiles of 128: rows 200..255 of the
  # second tile are masked on load and store, and the row reductions in between read them unmasked
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  ip = nl.arange(128)[:, None]
  jf = nl.arange(96)[None, :]
  for i in nl.affine_range(2):
    t = nl.load(a[i * 128 + ip, jf], mask=(i * 128 + ip < 200))
    ms = nl.mean(nl.square(t), axis=[1])
    peak = nl.max(t, axis=1, keepdims=True)
    s = nl.add(nl.multiply(t, nl.reciprocal(ms)), peak)
    nl.store(out[i * 128 + ip, jf], value=s, mask=(i * 128 + ip < 200))
  return out
