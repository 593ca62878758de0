import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(xT, y):
  # xT: [K, M] (x delivered transposed), y: [K, N]; out = xT^T @ y of shape [M, N]
  out = nl.ndarray((xT.shape[1], y.shape[1]), dtype=xT.dtype, buffer=nl.shared_hbm)
  x_sb = nl.load(xT)
  y_sb = nl.load(y)
  ps = nisa.nc_matmul(x_sb, y_sb)
  nl.store(out, value=nl.copy(ps, dtype=out.dtype))
  return out
