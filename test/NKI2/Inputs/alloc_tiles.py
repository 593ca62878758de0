# nl.alloc_tiles / nl.alloc_blocks (Trn2, Trn3 docs) allocate storage as a grid of tiles.
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def copy_tiles(a):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  grid = nl.alloc_tiles(tile_shape=(128, 512), element_shape=(256, 512), buffer=nl.sbuf, dtype=a.dtype)
  blocks = nl.alloc_blocks(tile_shape=(128, 512), block_shape=(2, 1), element_shape=(256, 512), buffer=nl.sbuf,
                           dtype=a.dtype)
  t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
  nisa.dma_copy(dst=t, src=a[0:128, 0:512])
  nisa.dma_copy(dst=out[0:128, 0:512], src=t)
  return out
