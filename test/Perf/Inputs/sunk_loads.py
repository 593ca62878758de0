# Inputs of sink-loads-that-do-not-fit.test: the rhs tiles of a matmul are loaded once into one
# buffer before the row loop, which reads every tile in each of its iterations (NKIBench matmul's
# layout). K // 128 tiles of N fp32 per partition are live across the whole row loop.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(xT, w):
  K, M = xT.shape
  _, N = w.shape
  out = nl.ndarray((M, N), dtype=xT.dtype, buffer=nl.shared_hbm)
  w_tiles = nl.ndarray((K // 128, nl.par_dim(128), N), dtype=w.dtype, buffer=nl.sbuf)
  for k in nl.affine_range(K // 128):
    w_tiles[k, :, :] = nl.load(w[k * 128:(k + 1) * 128, 0:N])
  for m in nl.affine_range(M // 128):
    for n in nl.affine_range(N // 512):
      acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
      for k in nl.affine_range(K // 128):
        x_tile = nl.load(xT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
        acc += nisa.nc_matmul(x_tile, w_tiles[k, :, n * 512:(n + 1) * 512])
      nl.store(out[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], value=nl.copy(acc, dtype=out.dtype))
  return out
