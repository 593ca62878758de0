import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(xT, y):
  # xT: [K, M] (x delivered transposed), y: [K, N]; out = xT^T @ y of shape [M, N]
  out = nl.ndarray((xT.shape[1], y.shape[1]), dtype=xT.dtype, buffer=nl.shared_hbm)
  x_sb = nl.load(xT)
  y_sb = nl.load(y)
  ps = nl.matmul(x_sb, y_sb, transpose_x=True)
  nl.store(out, value=nl.copy(ps, dtype=out.dtype))
  return out
