# exp(x) through a private HBM scratch: 8 column tiles of 256 are stored side by side in the
# rows of `t` ([128, 2048]), then loaded back.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 2048), dtype=x.dtype, buffer=nl.shared_hbm)
  t = nl.ndarray((128, 2048), dtype=x.dtype, buffer=nl.hbm)
  for j in nl.affine_range(8):
    e = nl.exp(nl.load(x[0:128, j * 256:(j + 1) * 256]))
    nl.store(t[0:128, j * 256:(j + 1) * 256], value=e)
  for j in nl.affine_range(8):
    y = nl.load(t[0:128, j * 256:(j + 1) * 256])
    nl.store(out[0:128, j * 256:(j + 1) * 256], value=nl.multiply(y, 2.0))
  return out
