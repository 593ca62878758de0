import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def grid_rows(a, b):
  # a, b: f32[128 * G, 512], launched as grid_rows[G](a, b): instance p adds rows p*128 .. p*128+127.
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  p = nl.program_id(0)
  rows = nl.arange(128)[:, None]
  cols = nl.arange(512)[None, :]
  x = nl.load(a[p * 128 + rows, cols])
  y = nl.load(b[p * 128 + rows, cols])
  nl.store(out[p * 128 + rows, cols], value=nl.add(x, y))
  return out


if __name__ == "__main__":
  a = np.ones((384, 512), dtype=np.float32)
  out = grid_rows[3](a, a)
