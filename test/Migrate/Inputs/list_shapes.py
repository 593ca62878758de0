# NKI 0.1 block dimensions in a shape built from lists, `[2] + [nl.par_dim(p), f]`, and a block
# tensor passed whole to a helper that indexes its blocks.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def fill_pair(a_tile, b_tile, pair):
  pair[0, :, :] = a_tile * 2.0
  pair[1, :, :] = nl.add(a_tile, b_tile)
  pair[1, :, 0:4] = pair[0, :, 0:4]


@nki.jit
def pair_of_tiles(a, b):
  rows, cols = a.shape
  out = nl.ndarray([2] + list(a.shape), dtype=a.dtype, buffer=nl.shared_hbm)
  a_tile = nl.load(a)
  b_tile = nl.load(b)
  pair = nl.ndarray([2] + [nl.par_dim(a_tile.shape[0]), a_tile.shape[1]], dtype=a_tile.dtype, buffer=nl.sbuf)
  fill_pair(a_tile, b_tile, pair)
  nl.store(out[0], value=pair[0, :, :])
  nl.store(out[1], value=pair[1])
  return out
