import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def kernel(a):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  g = nl.mgrid[0:128, 0:512]
  t = nl.load(a[g.p, g.y])
  nl.store(out[g.p, g.x], value=t)
  return out
