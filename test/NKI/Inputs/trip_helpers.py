import math
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE = 128


def div_ceil(n, d=TILE):
  """Rounded-up quotient, as kernels write it at module level."""
  return (n + d - 1) // d


def n_chunks(total, chunk):
  q = div_ceil(total, d=chunk)
  return max(q, 1)


@nki.jit
def kernel(a):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  widths = [a.shape[1] // 4, a.shape[1] // 4]
  for i in nl.affine_range(math.ceil(a.shape[0] / TILE)):
    for j in nl.affine_range(n_chunks(a.shape[1], sum(widths))):
      t = nl.load(a[i * TILE:(i + 1) * TILE, j * 256:(j + 1) * 256])
      nl.store(out[i * TILE:(i + 1) * TILE, j * 256:(j + 1) * 256], value=nl.add(t, 1.0))
  for k in nl.sequential_range(div_ceil(a.shape[0]) - math.floor(1.5) + math.isqrt(9) - int(math.sqrt(4.0))):
    t2 = nl.load(a[k * TILE:(k + 1) * TILE, 0:128])
    nl.store(out[k * TILE:(k + 1) * TILE, 0:128], value=nl.add(t2, 1.0))
  return out
