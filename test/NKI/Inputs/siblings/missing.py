import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nosuchmodule import ceil_div


@nki.jit
def rows_copy(x):
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(ceil_div(x.shape[0], 128)):
    nl.store(out[i * 128:(i + 1) * 128, :], value=nl.load(x[i * 128:(i + 1) * 128, :]))
  return out
