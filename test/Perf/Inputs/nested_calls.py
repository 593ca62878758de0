import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(a, b):
  # a, b: f32[128, 1024]; out = exp(a * b), every call written inside another call's arguments.
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  nl.store(out, value=nl.exp(nisa.tensor_tensor(nl.load(a), nl.load(b), nl.multiply)))
  return out
