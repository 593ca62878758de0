import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a, scale):
  # a: f32[256, 512]; out = a * scale + 1, through functions defined in the kernel (closures over a, out, rows, scale)
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  rows = 128

  def load_rows(i):
    return nl.load(a[i * rows:(i + 1) * rows, :])

  def body(i, bias=1.0):
    t = load_rows(i)

    def scaled(x):
      return nl.multiply(x, scale)

    u = scaled(t)
    for j in nl.affine_range(4):
      nl.store(out[i * rows:(i + 1) * rows, j * 128:(j + 1) * 128], value=nl.add(u[:, j * 128:(j + 1) * 128], bias))

  for i in nl.affine_range(a.shape[0] // rows):
    body(i)
  return out
