# An SPMD kernel with no launch in the file: instance p scales rows p*128 .. p*128+127 by p + 1.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def grid_halves(a):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  p = nl.program_id(0)
  rows = nl.arange(128)[:, None]
  cols = nl.arange(256)[None, :]
  x = nl.load(a[p * 128 + rows, cols])
  nl.store(out[p * 128 + rows, cols], value=nl.multiply(x, p + 1.0))
  return out
