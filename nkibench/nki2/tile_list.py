# Matmul of a row-major left operand, in the current `nki` dialect, with the
# old block dimensions replaced by Python lists of tiles.
#
# Inputs (HBM, float32):
#   x    [M, K] = [256, 256]     row-major (rows on partitions after the load)
#   w    [K, N] = [256, 512]
# Output:
#   out  [M, N]   out = x @ w
#
# The K/128 weight tiles [128, N] are loaded once into a Python list `w_tiles`
# (the 0.1 dialect would have used a block dimension (K/128, par_dim(128), N)).
# Per 128-row tile of x, each [128, 128] block is transposed on TensorE with
# nisa.nc_transpose(dst=psum, data=..., engine=nisa.engine.tensor), evicted to
# SBUF and appended to the list `xT_tiles`; then the K/128 matmuls accumulate
# into one PSUM tile with the default accumulate=None (first write overwrites,
# later writes add).
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(x, w):
  M, K = x.shape
  K2, N = w.shape
  assert K == K2
  P = nl.tile_size.pmax
  assert M % P == 0 and K % P == 0 and N <= nl.tile_size.gemm_moving_fmax
  KT = K // P

  out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)

  w_tiles = []
  for k in range(KT):
    w_sb = nl.ndarray((P, N), dtype=w.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=w_sb, src=w[k * P:(k + 1) * P, 0:N])
    w_tiles.append(w_sb)

  for m in nl.affine_range(M // P):
    x_sb = nl.ndarray((P, K), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x_sb, src=x[m * P:(m + 1) * P, 0:K])

    xT_tiles = []
    for k in range(KT):
      t_ps = nl.ndarray((P, P), dtype=x.dtype, buffer=nl.psum)
      nisa.nc_transpose(dst=t_ps, data=x_sb[0:P, k * P:(k + 1) * P], engine=nisa.engine.tensor)
      t_sb = nl.ndarray((P, P), dtype=x.dtype, buffer=nl.sbuf)
      nisa.tensor_copy(dst=t_sb, src=t_ps)
      xT_tiles.append(t_sb)

    acc = nl.ndarray((P, N), dtype=nl.float32, buffer=nl.psum)
    for k in range(KT):
      nisa.nc_matmul(dst=acc, stationary=xT_tiles[k], moving=w_tiles[k])

    res = nl.ndarray((P, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out[m * P:(m + 1) * P, 0:N], src=res)

  return out
