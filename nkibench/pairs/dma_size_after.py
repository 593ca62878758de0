# Direction pair "dma_size" (after): larger DMA transfers.
#
# Inputs (HBM, float32):
#   a, b  [128, 4096]
# Output:
#   out   [128, 4096]   out = a * b + a
#
# AFTER: 1024-column tiles, so every DMA moves 128 x 1024 x 4 B = 512 KiB
# (4 KiB per partition) and each instruction covers 1024 elements per
# partition: 4 iterations, 12 large DMAs.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(a, b):
  P, N = a.shape
  assert P == nl.tile_size.pmax
  TILE_F = 1024
  assert N % TILE_F == 0

  out = nl.ndarray((P, N), dtype=a.dtype, buffer=nl.shared_hbm)

  for f in nl.affine_range(N // TILE_F):
    a_tile = nl.load(a[0:P, f * TILE_F:(f + 1) * TILE_F])
    b_tile = nl.load(b[0:P, f * TILE_F:(f + 1) * TILE_F])
    prod = nisa.tensor_tensor(a_tile, b_tile, op=nl.multiply)
    res = nisa.tensor_tensor(prod, a_tile, op=nl.add)
    nl.store(out[0:P, f * TILE_F:(f + 1) * TILE_F], value=res)

  return out
