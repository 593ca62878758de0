import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a):
  # a: f32[128, 512]; out[:, 128j:128(j+1)] = a[:, 128j:128(j+1)] * (j + 1) + 10
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  tiles = []
  offset = 0.0

  def add_tile(j):
    t = nl.load(a[:, j * 128:(j + 1) * 128])
    tiles.append(nl.add(nl.multiply(t, j + 1.0), offset))

  offset = 10.0  # read when add_tile runs: Python closures bind late
  for j in nl.static_range(4):
    add_tile(j)
  for j in nl.static_range(4):
    nl.store(out[:, j * 128:(j + 1) * 128], value=tiles[j])
  return out
