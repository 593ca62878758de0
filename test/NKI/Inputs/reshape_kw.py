import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a):
  # a: [2, 64, 512]; out = a + 1, through [128, 512] views of both made with reshape(shape=...)
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  a2 = a.reshape(shape=(128, 512))
  o2 = out.reshape(shape=(128, 512))
  t = nl.load(a2[0:128, 0:512])
  nl.store(o2[0:128, 0:512], value=nl.add(t, 1.0))
  return out
