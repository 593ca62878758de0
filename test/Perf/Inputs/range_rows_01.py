# A Python `range` loop in the neuronxcc.nki dialect (0.1): the compiler makes it a sequential_range.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  for i in range(a.shape[0] // 128):
    t = nl.load(a[i * 128:(i + 1) * 128, :])
    nl.store(out[i * 128:(i + 1) * 128, :], value=nl.exp(t))
  return out
