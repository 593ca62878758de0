import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  for i in range(10, 0, -3):
    pass
  assert i == 1
  for j in range(0, 10, 4):
    pass
  assert j == 8
  for k in nl.affine_range(4):
    for q in range(-9223372036854775807, 9223372036854775807, 3):
      pass
  assert k == 3
  out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  nl.store(out, value=nl.load(x))
  return out
