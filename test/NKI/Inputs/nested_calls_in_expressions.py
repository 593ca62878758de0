import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a, scale):
  # a: f32[256, 512]; functions defined in the kernel called inside expressions: as arguments, nested in
  # each other's arguments, in a keyword argument and in a return expression.
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  rows = 128

  def load_rows(i):
    return nl.load(a[i * rows:(i + 1) * rows, :])

  def scaled(x):
    return nl.multiply(x, scale)

  def plus_scaled(x):
    return nl.add(scaled(x), x)

  for i in nl.affine_range(a.shape[0] // rows):
    t = nl.add(load_rows(i), 1.0)
    u = nl.add(plus_scaled(t), scaled(load_rows(i)))
    nl.store(out[i * rows:(i + 1) * rows, :], value=plus_scaled(u))
  return out
