import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from kernel_helpers import scale  # another file's function: not traced


@nki.jit
def kernel(a):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  t = nl.load(a)
  u = scale(t)
  nl.store(out, value=u)
  return out
