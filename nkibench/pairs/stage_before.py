# Direction pair "stage" (before): a load whose address does not depend on the
# column block loop is issued again for every column block.
#
# Inputs (HBM, float32):
#   xT [K, M] = [512, 128]   x transposed
#   w  [K, N] = [512, 2048]
# Output:
#   out [M, N] = [128, 2048]  out = x @ w
#
# BEFORE: 16 (n) x 4 (k) loads of a 64 KiB x tile (4 MiB) beside the 4 MiB of w.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(xT, w):
  K, M = xT.shape
  _, N = w.shape
  out = nl.ndarray((M, N), dtype=xT.dtype, buffer=nl.shared_hbm)
  for n in nl.affine_range(N // 128):
    acc = nl.zeros((128, 128), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(K // 128):
      x_tile = nl.load(xT[k * 128:(k + 1) * 128, 0:M])
      w_tile = nl.load(w[k * 128:(k + 1) * 128, n * 128:(n + 1) * 128])
      acc += nisa.nc_matmul(x_tile, w_tile)
    nl.store(out[0:M, n * 128:(n + 1) * 128], value=nl.copy(acc, dtype=out.dtype))
  return out
