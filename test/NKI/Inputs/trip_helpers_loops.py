import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


def n_elts(shape):
  """Product of the dimensions: a loop over a tuple, run at trace time."""
  r = 1
  for s in shape:
    r *= s
  return r


def tiles_of(n, sizes=(512, 256, 128)):
  """The first tile size dividing n (for/if/break/else, range(), early return)."""
  for t in sizes:
    if n % t == 0:
      break
  else:
    return n
  count = 0
  for _ in range(0, n, t):
    count += 1
  return count


@nki.jit
def kernel(a):
  # a: f32[2, 128, 768]: rows = n_elts(a.shape[:-1]) = 256, columns in tiles_of(768) = 3 tiles of 256
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  rows = n_elts(a.shape[:-1])
  x = a.reshape((rows, a.shape[-1]))
  y = out.reshape((rows, a.shape[-1]))
  ones = nl.ones((128, 256), dtype=nl.float32)
  for i in nl.affine_range(rows // 128):
    for j in nl.affine_range(tiles_of(a.shape[-1])):
      t = nl.load(x[i * 128:(i + 1) * 128, j * 256:(j + 1) * 256])
      nl.store(y[i * 128:(i + 1) * 128, j * 256:(j + 1) * 256], value=nl.add(t, ones))
  return out
