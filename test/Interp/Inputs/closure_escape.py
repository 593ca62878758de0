import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a):
  # a: f32[128, 512]; a closure returned by the function that defined it
  def make(k):
    def scale(t):
      return nl.multiply(t, k)
    return scale

  f = make(3.0)
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  nl.store(out, value=f(nl.load(a)))
  return out
