import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

@nki.jit
def kernel(x, w):
  # x: f32[128, 512] (K x M), w: f32[128, 256] (K x N); out[M, N] = x^T @ w + 1
  # M tiles sliced with nl.ds on the SBUF tile and on the HBM output; the size is a named constant
  out = nl.ndarray((512, 256), dtype=x.dtype, buffer=nl.shared_hbm)
  TILE = 128
  x_sb = nl.load(x)
  w_sb = nl.load(w[:, nl.ds(0, 256)])
  for m in nl.affine_range(4):
    ps = nisa.nc_matmul(stationary=x_sb[:, nl.ds(m * TILE, TILE)], moving=w_sb)
    rows = nl.ds(m * TILE, TILE)
    nl.store(out[rows, :], value=nl.add(ps, 1.0))
  return out
