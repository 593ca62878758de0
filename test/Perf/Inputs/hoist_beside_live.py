# Inputs of hoist-beside-live.test: a loop-invariant row (row_tile) is loaded in a row-tile loop whose body
# makes a chain of short-lived [128, N] tiles while `acc` (one [128, N] block per row tile) is live across
# the whole loop. Whether the compiler can hoist row_tile depends on what is live beside it at the loop's
# peak, not on the sum of every tile the body makes.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, row):
  M, N = x.shape
  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
  acc = nl.zeros((M // 128, nl.par_dim(128), N), dtype=nl.float32, buffer=nl.sbuf)
  for i in nl.affine_range(M // 128):
    x_tile = nl.load(x[i * 128:(i + 1) * 128, 0:N])
    row_tile = nl.load(row[0:1, 0:N])
    y0 = nl.multiply(x_tile, row_tile.broadcast_to((128, N)))
    y1 = nl.exp(y0)
    y2 = nl.add(y1, 1.0)
    y3 = nl.multiply(y2, 0.5)
    y4 = nl.square(y3)
    y5 = nl.add(y4, y3)
    y6 = nl.multiply(y5, 2.0)
    y7 = nl.add(y6, 1.0)
    y8 = nl.exp(y7)
    y9 = nl.multiply(y8, 0.25)
    acc[i, 0:128, 0:N] += y9
  for i in nl.affine_range(M // 128):
    nl.store(out[i * 128:(i + 1) * 128, 0:N], value=acc[i, 0:128, 0:N])
  return out
