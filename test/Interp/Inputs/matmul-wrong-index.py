# Tiled matrix multiply: result = lhsT.T @ rhs.
#
# Inputs (HBM, float32):
#   lhsT   [K, M] = [512, 256]   the left operand, already transposed so that the
#                                contraction axis K lies on the partition dimension
#   rhs    [K, N] = [512, 1024]
# Output:
#   result [M, N] = [256, 1024]  result[m, n] = sum_k lhsT[k, m] * rhs[k, n]
#
# Tiling: M in tiles of 128 (stationary free size), N in tiles of 512 (moving free
# size, one PSUM bank of fp32), K in tiles of 128 (partition dimension). For every
# (m, n) output tile, the K tiles are accumulated into one PSUM tile with `+=`
# (a matmul accumulation group), copied PSUM -> SBUF and stored.
#
# Reference: reference/matmul_K512_M256_N1024_numpy.py computes lhs @ rhs with
# lhs [M, K]; its transform_to_nki_inputs passes lhs.T as lhsT.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(lhsT, rhs):
  K, M = lhsT.shape
  K_rhs, N = rhs.shape
  assert K == K_rhs

  TILE_K = nl.tile_size.pmax                    # 128: contraction tile (partitions)
  TILE_M = nl.tile_size.gemm_stationary_fmax    # 128: stationary free size
  TILE_N = nl.tile_size.gemm_moving_fmax        # 512: moving free size
  assert M % TILE_M == 0 and N % TILE_N == 0 and K % TILE_K == 0

  result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

  for m in nl.affine_range(M // TILE_M):
    for n in nl.affine_range(N // TILE_N):
      # One PSUM bank per output tile: 128 partitions x 512 fp32.
      res_psum = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)

      for k in nl.affine_range(K // TILE_K):
        # stationary tile [128 (k), 128 (m)] and moving tile [128 (k), 512 (n)]
        lhsT_tile = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
        rhs_tile = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, 0:TILE_N])
        # res_psum[m', n'] += sum_k' lhsT_tile[k', m'] * rhs_tile[k', n']
        res_psum += nisa.nc_matmul(lhsT_tile, rhs_tile)

      # Evict PSUM -> SBUF, then write the tile back to HBM.
      res_sb = nl.copy(res_psum, dtype=result.dtype)
      nl.store(result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=res_sb)

  return result
