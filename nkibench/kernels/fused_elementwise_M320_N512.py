# A fused elementwise chain on row tiles, with a masked partial last tile.
#
# Inputs (HBM, float32):
#   a, b, c  [M, N] = [320, 512]
# Output:
#   out      [M, N]   out = 0.5 * max(a * b + c, 0) - a
#
# M = 320 = 2 * 128 + 64, so the loop runs over 3 row tiles and the last one
# only has 64 valid rows: every load, compute op and store carries the same
# row mask (m * 128 + p < M), which keeps the out-of-range partitions from
# being read from or written to HBM.
#   prod = a * b                         (nl.multiply)
#   acc  = prod + c                      (nl.add)
#   act  = max(acc, 0.0) * 0.5           (one tensor_scalar with two ops)
#   out  = act - a                       (nl.subtract)
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(a, b, c):
  M, N = a.shape
  TILE_P = nl.tile_size.pmax
  n_tiles = (M + TILE_P - 1) // TILE_P        # 3 tiles, the last one partial

  out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)

  i_p = nl.arange(TILE_P)[:, None]
  i_f = nl.arange(N)[None, :]

  for m in nl.affine_range(n_tiles):
    a_tile = nl.load(a[m * TILE_P + i_p, i_f], mask=(m * TILE_P + i_p < M))
    b_tile = nl.load(b[m * TILE_P + i_p, i_f], mask=(m * TILE_P + i_p < M))
    c_tile = nl.load(c[m * TILE_P + i_p, i_f], mask=(m * TILE_P + i_p < M))

    prod = nl.multiply(a_tile, b_tile, mask=(m * TILE_P + i_p < M))
    acc = nl.add(prod, c_tile, mask=(m * TILE_P + i_p < M))
    act = nisa.tensor_scalar(data=acc, op0=nl.maximum, operand0=0.0,
                             op1=nl.multiply, operand1=0.5,
                             mask=(m * TILE_P + i_p < M))
    res = nl.subtract(act, a_tile, mask=(m * TILE_P + i_p < M))

    nl.store(out[m * TILE_P + i_p, i_f], value=res, mask=(m * TILE_P + i_p < M))

  return out
