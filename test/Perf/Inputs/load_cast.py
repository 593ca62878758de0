import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a):
  # a: f32[128, 2048]; the load casts to bf16 on the way in, so it still reads 4 bytes per element.
  out = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
  t = nl.load(a, dtype=nl.bfloat16)
  nl.store(out, value=nl.multiply(t, 2.0))
  return out
