import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512) dtype=x.dtype, buffer=nl.shared_hbm)
  return out
