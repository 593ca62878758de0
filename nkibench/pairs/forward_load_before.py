# Direction pair "forward_load" (before): the lower 64 rows of each loaded 128-row tile are copied
# to partitions 0..63 (an engine copy) to multiply them with the upper rows, as NKIBench rope does.
#
# Input (HBM, float32):
#   x   [M, N] = [512, 2048]
# Output:
#   out [M / 2, N] = [256, 2048]   out[64 t + i] = x[128 t + i] * x[128 t + 64 + i]
#
# BEFORE: per tile one 1 MiB load, an engine copy and a VectorE multiply of 64 x N, one 512 KiB store.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  M, N = x.shape
  out = nl.ndarray((M // 2, N), dtype=x.dtype, buffer=nl.shared_hbm)
  i_p = nl.arange(128)[:, None]
  i_h = nl.arange(64)[:, None]
  i_f = nl.arange(N)[None, :]
  for t in nl.affine_range(M // 128):
    tile = nl.ndarray((128, N), dtype=x.dtype, buffer=nl.sbuf)
    tile[i_p, i_f] = nl.load(x[t * 128 + i_p, i_f])
    low = nl.copy(tile[64 + i_h, i_f])
    y = nl.multiply(tile[i_h, i_f], low)
    nl.store(out[t * 64 + i_h, i_f], value=y)
  return out
