# Direction pair "dma_throughput" (before, compiler effect: DMA throughput up to
# the measured level, trn1 dma.queue_bytes_per_ns): a memory-bound silu.
#
# Inputs (HBM, float32):
#   x  [2048, 2048]
# Output:
#   out [2048, 2048]   out = x * sigmoid(x)
#
# BEFORE: [128 x 256] tiles: every DMA moves 128 KiB, 1 KiB per partition
# (256 DMAs in all, 80 % efficiency).
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  M, N = x.shape
  TILE_F = 256
  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
  for m in nl.affine_range(M // 128):
    for f in nl.affine_range(N // TILE_F):
      x_tile = nl.load(x[m * 128:(m + 1) * 128, f * TILE_F:(f + 1) * TILE_F])
      s_tile = nl.sigmoid(x_tile)
      res = nl.multiply(x_tile, s_tile)
      nl.store(out[m * 128:(m + 1) * 128, f * TILE_F:(f + 1) * TILE_F], value=res)
  return out
