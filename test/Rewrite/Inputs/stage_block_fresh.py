# A block buffer allocated afresh in each iteration of j and filled per k; its load does not depend on b.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def column_products(x, w):
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  for b in nl.affine_range(2):
    for j in nl.affine_range(2):
      wb = nl.ndarray((2, nl.par_dim(128), 256), dtype=w.dtype, buffer=nl.sbuf)
      for k in nl.affine_range(2):
        wb[k, 0:128, 0:256] = nl.load(w[k * 128:(k + 1) * 128, j * 256:(j + 1) * 256])
      for k in nl.affine_range(2):
        xt = nl.load(x[b, k * 128:(k + 1) * 128, j * 256:(j + 1) * 256])
        nl.store(out[b, k * 128:(k + 1) * 128, j * 256:(j + 1) * 256], value=nl.multiply(xt, wb[k, 0:128, 0:256]))
  return out
