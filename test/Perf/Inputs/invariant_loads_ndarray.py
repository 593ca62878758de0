# Inputs of hoist-invariant-loads.test: invariant_loads.py with its tiles allocated by nl.ndarray in
# the loop body and filled by `tile[...] = nl.load(...)` (the NKI matmul tutorial's style).
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
        x_tile = nl.ndarray((128, 128), dtype=xT.dtype, buffer=nl.sbuf)
        w_tile = nl.ndarray((128, 512), dtype=w.dtype, buffer=nl.sbuf)
        x_tile[...] = nl.load(xT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
        w_tile[...] = nl.load(w[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
        acc += nisa.nc_matmul(x_tile, w_tile)
      nl.store(out[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], value=nl.copy(acc, dtype=out.dtype))
  return out
