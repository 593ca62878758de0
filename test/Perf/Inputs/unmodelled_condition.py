import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(2):
    t = nl.load(a[i * 128:(i + 1) * 128, :])
    if t[0, 0] > 0:
      u = nl.exp(t)
    else:
      u = nl.multiply(t, 3.0)
    nl.store(out[i * 128:(i + 1) * 128, :], value=u)
  return out
