# Direction pair "dma_size" (before): larger DMA transfers.
#
# Inputs (HBM, float32):
#   a, b  [128, 4096]
# Output:
#   out   [128, 4096]   out = a * b + a
#
# BEFORE: the free dimension is walked in 64-column tiles, so every DMA moves
# 128 x 64 x 4 B = 32 KiB (256 B per partition) and every instruction works on
# only 64 elements per partition: 64 iterations, 192 small DMAs.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(a, b):
  P, N = a.shape
  assert P == nl.tile_size.pmax
  TILE_F = 64
  assert N % TILE_F == 0

  out = nl.ndarray((P, N), dtype=a.dtype, buffer=nl.shared_hbm)

  for f in nl.affine_range(N // TILE_F):
    a_tile = nl.load(a[0:P, f * TILE_F:(f + 1) * TILE_F])
    b_tile = nl.load(b[0:P, f * TILE_F:(f + 1) * TILE_F])
    prod = nisa.tensor_tensor(a_tile, b_tile, op=nl.multiply)
    res = nisa.tensor_tensor(prod, a_tile, op=nl.add)
    nl.store(out[0:P, f * TILE_F:(f + 1) * TILE_F], value=res)

  return out
