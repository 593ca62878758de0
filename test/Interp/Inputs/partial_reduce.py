import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def kernel(a):
  # a: f32[128, 100]; the masked-off columns 100..127 reach a row sum
  out = nl.ndarray((128, 1), dtype=a.dtype, buffer=nl.shared_hbm)
  ip = nl.arange(128)[:, None]
  jf = nl.arange(128)[None, :]
  t = nl.load(a[ip, jf], mask=(jf < 100))
  e = nl.exp(t)
  nl.store(out, value=nl.sum(e, axis=1, keepdims=True))
  return out
