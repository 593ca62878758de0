# A dtype view whose last dimension is not a whole number of the new elements: 3 bf16 are 6 bytes.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def bad_view(x):
  out = nl.ndarray((128, 3), dtype=nl.bfloat16, buffer=nl.shared_hbm)
  t = nl.load(x)
  w = t.view(nl.float32)
  nl.store(out, value=t)
  return out
