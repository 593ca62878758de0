import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def grid_triangle(a, w):
  # a: f32[128 * G, 128 * G], w: f32[128, 128]; launched as grid_triangle[G]: instance i multiplies
  # the i + 1 blocks of block row i left of and on the diagonal by w (so the instances' work differs).
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  i = nl.program_id(0)
  wt = nl.load(w)
  for t in nl.affine_range(i + 1):
    x = nl.load(a[i * 128:(i + 1) * 128, t * 128:(t + 1) * 128])
    y = nl.matmul(x, wt, transpose_x=True)
    nl.store(out[i * 128:(i + 1) * 128, t * 128:(t + 1) * 128], value=y)
  return out
