# Direction pair "compute_at" (before): a producer nest writes exp(x) for the
# whole matrix into one SBUF buffer, column half by column half, then a
# consumer loop reads it back row tile by row tile.
#
# Input (HBM, float32):
#   x   [M, N] = [1024, 7168]   28 MiB
# Output:
#   out [M, N] = [1024, 7168]   out = 2 exp(x)
#
# BEFORE: the buffer e holds the whole matrix, 8 x 28 KiB = 224 KiB per
# partition, more than the 192 KiB of a trn1 SBUF partition (NKI.md §3.3): the
# compiler spills it to HBM and reloads it.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  M, N = x.shape
  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
  e = nl.ndarray((M // 128, nl.par_dim(128), N), dtype=nl.float32, buffer=nl.sbuf)
  for h in nl.affine_range(2):
    for m in nl.affine_range(M // 128):
      t = nl.load(x[m * 128:(m + 1) * 128, h * (N // 2):(h + 1) * (N // 2)])
      e[m, 0:128, h * (N // 2):(h + 1) * (N // 2)] = nl.exp(t)
  for n in nl.affine_range(M // 128):
    nl.store(out[n * 128:(n + 1) * 128, 0:N], value=nl.multiply(e[n, 0:128, 0:N], 2.0))
  return out
