# Tile helpers of the project (NKI calls on their arguments).
import neuronxcc.nki.language as nl

TILE = 128


def load_rows(src, i):
  return nl.load(src[i * TILE:(i + 1) * TILE, :])


def scaled(t, k):
  return nl.multiply(t, k)


def copy_blocks(dst, src, i, width):
  for j in nl.affine_range(src.shape[1] // width):
    t = nl.load(src[i * TILE:(i + 1) * TILE, j * width:(j + 1) * width])
    nl.store(dst[i * TILE:(i + 1) * TILE, j * width:(j + 1) * width], value=t)
