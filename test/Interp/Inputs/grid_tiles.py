import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def grid_tiles(a):
  # a: f32[128 * G0, 128 * G0 * G1], launched as grid_tiles[G0, G1]: instance (i, j) owns row block i
  # and column blocks j*G0 .. j*G0+G0-1; of those, the first i+1 get a + 1, the others a * 2.
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  i = nl.program_id(0)
  j = nl.program_id(axis=1)
  g0 = nl.num_programs(0)
  rows = nl.arange(128)[:, None]
  cols = nl.arange(128)[None, :]
  for t in nl.affine_range(i + 1):
    c = (j * g0 + t) * 128
    x = nl.load(a[i * 128 + rows, c + cols])
    nl.store(out[i * 128 + rows, c + cols], value=nl.add(x, 1.0))
  for t in nl.affine_range(g0 - i - 1):
    c = (j * g0 + i + 1 + t) * 128
    x = nl.load(a[i * 128 + rows, c + cols])
    nl.store(out[i * 128 + rows, c + cols], value=nl.multiply(x, 2.0))
  return out
