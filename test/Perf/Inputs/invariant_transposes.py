# Inputs of reuse-invariant-transposes.test: every (n, m) iteration loads a row block of x and
# transposes it on TensorE (nc_matmul with is_transpose, as the NKIBench kernels do) before its
# product with a column block of w. The load's address does not depend on n.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(x, w, ident):
  M, K = x.shape
  _, N = w.shape
  out = nl.ndarray((K, N), dtype=x.dtype, buffer=nl.shared_hbm)
  ident_sb = nl.load(ident)
  for n in nl.affine_range(N // 512):
    w_tile = nl.load(w[0:128, n * 512:(n + 1) * 512])
    acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
    for m in nl.affine_range(M // 128):
      x_tile = nl.load(x[m * 128:(m + 1) * 128, 0:128])
      xT_psum = nisa.nc_matmul(x_tile, ident_sb, is_moving_onezero=True, is_transpose=True)
      xT = nl.copy(xT_psum)
      acc += nisa.nc_matmul(xT, w_tile)
    nl.store(out[0:128, n * 512:(n + 1) * 512], value=nl.copy(acc, dtype=out.dtype))
  return out
