# ndim, size and itemsize of a kernel argument size a loop: x is f32[256, 64], so
# rows = size // shape[-1] = 256, one 128-row tile per iteration, and the column count is
# derived from itemsize (256 bytes per row / 4).
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def scale_rows(x):
  assert x.ndim == 2
  cols = 256 // x.itemsize
  rows = x.size // cols
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(rows // 128):
    t = nl.load(x[i * 128:(i + 1) * 128, 0:cols])
    nl.store(out[i * 128:(i + 1) * 128, 0:cols], value=nl.multiply(t, 2.0))
  return out
