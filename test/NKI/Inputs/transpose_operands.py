import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def transposed_operands(x, y):
  # x [96, 128], y [128, 256]: out = x @ y, each operand of nl.matmul an nl.transpose result (PSUM)
  out = nl.ndarray((96, 256), dtype=nl.float32, buffer=nl.shared_hbm)
  x_sb = nl.load(x)
  xT = nl.transpose(x_sb)
  for j in nl.affine_range(2):
    yT_sb = nl.load_transpose2d(y[:, j * 128:(j + 1) * 128])
    y_cols = nl.transpose(yT_sb)
    ps = nl.matmul(xT, y_cols, transpose_x=True)
    nl.store(out[:, j * 128:(j + 1) * 128], value=nl.copy(ps))
  return out
