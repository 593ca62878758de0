# Row and column tiles sized with min(): every tile is full when the shape is a multiple of the tile,
# and a loop of one iteration makes c1 - c0 one number.
import nki
import nki.isa as nisa
import nki.language as nl

PMAX = 128
COLS = 512


@nki.jit
def scale(a):
  n_rows, n_cols = a.shape
  out = nl.ndarray((n_rows, n_cols), dtype=a.dtype, buffer=nl.shared_hbm)
  for t in range((n_rows + PMAX - 1) // PMAX):
    r0 = t * PMAX
    rs = min(PMAX, n_rows - r0)
    for c in nl.affine_range((n_cols + COLS - 1) // COLS):
      c0 = c * COLS
      c1 = min(c0 + COLS, n_cols)
      cs = c1 - c0
      x = nl.ndarray((rs, cs), dtype=a.dtype, buffer=nl.sbuf)
      nisa.dma_copy(dst=x, src=a[r0:r0 + rs, c0:c1])
      y = nl.ndarray((rs, cs), dtype=a.dtype, buffer=nl.sbuf)
      nisa.tensor_scalar(dst=y, data=x, op0=nl.multiply, operand0=2.0)
      nisa.dma_copy(dst=out[r0:r0 + rs, c0:c1], src=y)
  return out
