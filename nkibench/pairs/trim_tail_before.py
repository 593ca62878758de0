# Direction pair "trim_tail" (before): the last column tile is partial and every
# tile is masked.
#
# Inputs (HBM, float32):
#   a, b  [128, 2112]   (2112 = 4 x 512 + 64)
# Output:
#   out   [128, 2112]   out = exp(a) * b
#
# BEFORE: 5 iterations of 512-column tiles, each statement masked to the
# columns that exist; the fifth tile has 64 of its 512 columns.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a, b):
  P, N = a.shape
  out = nl.ndarray((P, N), dtype=a.dtype, buffer=nl.shared_hbm)
  i_p = nl.arange(128)[:, None]
  i_f = nl.arange(512)[None, :]
  for j in nl.affine_range(5):
    a_tile = nl.ndarray((nl.par_dim(128), 512), dtype=a.dtype, buffer=nl.sbuf)
    b_tile = nl.ndarray((nl.par_dim(128), 512), dtype=a.dtype, buffer=nl.sbuf)
    e_tile = nl.ndarray((nl.par_dim(128), 512), dtype=a.dtype, buffer=nl.sbuf)
    res = nl.ndarray((nl.par_dim(128), 512), dtype=a.dtype, buffer=nl.sbuf)
    a_tile[i_p, i_f] = nl.load(a[i_p, j * 512 + i_f], mask=(j * 512 + i_f < N))
    b_tile[i_p, i_f] = nl.load(b[i_p, j * 512 + i_f], mask=(j * 512 + i_f < N))
    e_tile[i_p, i_f] = nl.exp(a_tile[i_p, i_f], mask=(j * 512 + i_f < N))
    res[i_p, i_f] = nl.multiply(e_tile[i_p, i_f], b_tile[i_p, i_f], mask=(j * 512 + i_f < N))
    nl.store(out[i_p, j * 512 + i_f], value=res[i_p, i_f], mask=(j * 512 + i_f < N))
  return out
