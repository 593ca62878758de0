# Direction pair "affine_loop" (after): sequential_range -> affine_range.
#
# Input (HBM, float32):
#   x    [M, N] = [1024, 512]
# Output:
#   out  [M, N]   out = exp(0.5 * x) + x
#
# AFTER: the same loop as nl.affine_range: iterations are declared
# independent, so loads, exp/add and stores of different tiles can be
# pipelined across the DMA queues and engines.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(x):
  M, N = x.shape
  TILE_P = nl.tile_size.pmax
  assert M % TILE_P == 0

  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)

  for m in nl.affine_range(M // TILE_P):
    x_tile = nl.load(x[m * TILE_P:(m + 1) * TILE_P, 0:N])
    e_tile = nisa.activation(op=nl.exp, data=x_tile, scale=0.5)   # exp(0.5 * x)
    res = nl.add(e_tile, x_tile)
    nl.store(out[m * TILE_P:(m + 1) * TILE_P, 0:N], value=res)

  return out
