# Direction pair "fuse_loops" (before): two loops with an HBM round trip.
#
# Inputs (HBM, float32):
#   x, y  [M, N] = [512, 512]
# Output:
#   out   [M, N]   out = exp(x) * y
#
# BEFORE: the first loop computes t = exp(x) tile by tile and writes it to a
# private HBM scratch tensor; the second loop reads t back from HBM and
# multiplies it by y. The intermediate costs an extra 1 MiB HBM write and
# 1 MiB HBM read, and the second loop cannot start a tile before the first
# loop has stored it.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(x, y):
  M, N = x.shape
  TILE_P = nl.tile_size.pmax
  assert M % TILE_P == 0

  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
  # intermediate exp(x), kept in (per-kernel, private) HBM
  t_hbm = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.hbm)

  for m in nl.affine_range(M // TILE_P):
    x_tile = nl.load(x[m * TILE_P:(m + 1) * TILE_P, 0:N])
    t_tile = nl.exp(x_tile)
    nl.store(t_hbm[m * TILE_P:(m + 1) * TILE_P, 0:N], value=t_tile)

  for m in nl.affine_range(M // TILE_P):
    t_tile = nl.load(t_hbm[m * TILE_P:(m + 1) * TILE_P, 0:N])
    y_tile = nl.load(y[m * TILE_P:(m + 1) * TILE_P, 0:N])
    res = nl.multiply(t_tile, y_tile)
    nl.store(out[m * TILE_P:(m + 1) * TILE_P, 0:N], value=res)

  return out
