# out = exp(x) * scales[0] + x, tiles of `tile[0]` rows: non-tensor arguments (a tuple, a tuple of
# floats, None) written as Python literals in --inputs reach the kernel on the device as such.
# recorded summary: silu_M4096_N7168
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(x, tile, scales, bias=None):
  assert bias is None
  M, N = x.shape
  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
  rows = tile[0]
  for m in nl.affine_range(M // rows):
    t = nl.load(x[m * rows:(m + 1) * rows, 0:N])
    e = nisa.activation(op=nl.exp, data=t)
    r = nl.add(nl.multiply(e, scales[0]), t)
    nl.store(out[m * rows:(m + 1) * rows, 0:N], value=r)
  return out
