# NKI 0.1: a masked load makes a partial tile (200 rows: 128 + 72) that later statements use without
# a mask: with a whole broadcast row, and through a tile of sums written in an inner loop and read after it.
import math
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def center_scale(x, w):
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  rows, cols = x.shape
  ip, jf, iu = nl.mgrid[0:128, 0:cols, 0:1]
  w_row = nl.load(w.reshape((1, cols))[iu, jf])
  wb = w_row.broadcast_to((128, cols))
  kp, kf = nl.mgrid[0:128, 0:128]
  for i in nl.affine_range(math.ceil(rows / 128)):
    t = nl.load(x[i * 128 + ip, jf], mask=(i * 128 + ip < rows))
    part = nl.ndarray((128, cols // 128), dtype=np.float32, buffer=nl.sbuf)
    for j in nl.affine_range(cols // 128):
      part[kp, j] = nisa.tensor_reduce(np.add, t[kp, j * 128 + kf], axis=(1,), keepdims=True, dtype=np.float32)
    mean = nl.sum(part, axis=1, keepdims=True) * (1.0 / cols)
    y = (t - mean) * wb
    nl.store(out[i * 128 + ip, jf], value=y, mask=(i * 128 + ip < rows))
  return out
