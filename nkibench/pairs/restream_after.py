# Direction pair "restream" (after): the kernel as the compiler runs restream_before.py (trn1
# scheduler.sink_loads_that_do_not_fit): the same loops, with each matmul's 2 KiB per partition
# of w loaded where it is read instead of the whole w (192 KiB per partition, more than the
# 176 KiB SBUF leaves usable) before the row loop.
#
# Inputs (HBM, float32):
#   xT [K, M] = [6144, 256]   x transposed
#   w  [K, N] = [6144, 1024]
# Output:
#   out [M, N] = [256, 1024]  out = x @ w
#
# AFTER: w streamed once per (m, n): 2 x 2 x 48 x 256 KiB = 48 MiB, xT twice (12 MiB), as before.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(xT, w):
  K, M = xT.shape
  _, N = w.shape
  out = nl.ndarray((M, N), dtype=xT.dtype, buffer=nl.shared_hbm)
  for m in nl.affine_range(M // 128):
    for n in nl.affine_range(N // 512):
      acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
      for k in nl.affine_range(K // 128):
        x_tile = nl.load(xT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
        w_tile = nl.load(w[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
        acc += nisa.nc_matmul(x_tile, w_tile)
      nl.store(out[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], value=nl.copy(acc, dtype=out.dtype))
  return out
