# Small kernels of our own for published-judge.test: the same elementwise
# a * b + a in 64-column tiles (many small DMAs) and in 1024-column tiles.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def small_tiles(a, b):
  P, N = a.shape
  out = nl.ndarray((P, N), dtype=a.dtype, buffer=nl.shared_hbm)
  for f in nl.affine_range(N // 64):
    a_tile = nl.load(a[0:P, f * 64:(f + 1) * 64])
    b_tile = nl.load(b[0:P, f * 64:(f + 1) * 64])
    prod = nisa.tensor_tensor(a_tile, b_tile, op=nl.multiply)
    res = nisa.tensor_tensor(prod, a_tile, op=nl.add)
    nl.store(out[0:P, f * 64:(f + 1) * 64], value=res)
  return out


@nki.jit
def big_tiles(a, b):
  P, N = a.shape
  out = nl.ndarray((P, N), dtype=a.dtype, buffer=nl.shared_hbm)
  for f in nl.affine_range(N // 1024):
    a_tile = nl.load(a[0:P, f * 1024:(f + 1) * 1024])
    b_tile = nl.load(b[0:P, f * 1024:(f + 1) * 1024])
    prod = nisa.tensor_tensor(a_tile, b_tile, op=nl.multiply)
    res = nisa.tensor_tensor(prod, a_tile, op=nl.add)
    nl.store(out[0:P, f * 1024:(f + 1) * 1024], value=res)
  return out
