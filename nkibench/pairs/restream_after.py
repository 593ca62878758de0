# Direction pair "restream" (after): the column block loop is outermost and each block loads only
# its 512 columns of w, 48 x 2 KiB = 96 KiB per partition, which SBUF keeps for both row tiles.
#
# Inputs (HBM, float32):
#   xT [K, M] = [6144, 256]   x transposed
#   w  [K, N] = [6144, 1024]
# Output:
#   out [M, N] = [256, 1024]  out = x @ w
#
# AFTER: w read once (24 MiB), xT twice (12 MiB).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(xT, w):
  K, M = xT.shape
  _, N = w.shape
  out = nl.ndarray((M, N), dtype=xT.dtype, buffer=nl.shared_hbm)
  w_tiles = nl.ndarray((N // 512, K // 128, nl.par_dim(128), 512), dtype=w.dtype, buffer=nl.sbuf)
  for n in nl.affine_range(N // 512):
    for k in nl.affine_range(K // 128):
      w_tiles[n, k, :, :] = nl.load(w[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
    for m in nl.affine_range(M // 128):
      acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
      for k in nl.affine_range(K // 128):
        x_tile = nl.load(xT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
        acc += nisa.nc_matmul(x_tile, w_tiles[n, k, :, :])
      nl.store(out[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], value=nl.copy(acc, dtype=out.dtype))
  return out
