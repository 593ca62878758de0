# A running maximum over the next `size` columns (NKI 0.1): the window reaches past the last column,
# where the mask cuts it short.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def trailing_max(x, size):
  p, n = x.shape
  out = nl.ndarray((p, n), dtype=x.dtype, buffer=nl.shared_hbm)
  ip, jf, kf = nl.mgrid[0:p, 0:n, 0:size]
  t = nl.load(x)
  m = nl.max(t[ip, jf + kf], axis=[2], mask=(jf + kf < n))
  nl.store(out, value=m)
  return out
