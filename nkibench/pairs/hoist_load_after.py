# Direction pair "hoist_load" (after): hoisting a loop-invariant load out of a loop.
#
# Inputs (HBM, float32):
#   xT   [K, M] = [128, 1024]   left operand, transposed (contraction axis on partitions)
#   w    [K, N] = [128, 512]    weight, exactly one moving tile [128, 512]
# Output:
#   out  [M, N] = [1024, 512]   out = xT.T @ w
#
# AFTER: the loop-invariant load of w is hoisted out of the row-tile loop and
# done once; every iteration reuses the same SBUF tile.
# Each of the 8 row tiles is one nc_matmul (K = 128 needs no accumulation).
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(xT, w):
  K, M = xT.shape
  _, N = w.shape
  TILE_M = nl.tile_size.gemm_stationary_fmax   # 128
  assert K == nl.tile_size.pmax and N == nl.tile_size.gemm_moving_fmax

  out = nl.ndarray((M, N), dtype=xT.dtype, buffer=nl.shared_hbm)

  w_tile = nl.load(w[0:K, 0:N])                          # loop-invariant, reloaded
  for m in nl.affine_range(M // TILE_M):
    xT_tile = nl.load(xT[0:K, m * TILE_M:(m + 1) * TILE_M])   # [128 (k), 128 (m)]
    res_psum = nisa.nc_matmul(xT_tile, w_tile)               # [128 (m), 512 (n)]
    res_sb = nl.copy(res_psum, dtype=out.dtype)
    nl.store(out[m * TILE_M:(m + 1) * TILE_M, 0:N], value=res_sb)

  return out
