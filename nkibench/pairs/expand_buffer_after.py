# Direction pair "expand_buffer" (after): expand_buffer_before.py rewritten by the op(s) below
# (nkibench/manifest.json, expect.ops of expand_buffer_after).
#
# Input (HBM, float32):
#   x   [M, N] = [1024, 2048]
# Output:
#   out [M, N] = [1024, 2048]   out = exp(x)
#
# AFTER (expand_buffer buf L0, then set_loop_kind L0 affine_range): each
# iteration has its own block of buf, so iterations are independent and the
# load of the next tile overlaps the exp and store of this one.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  M, N = x.shape
  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
  buf = nl.ndarray((8, nl.par_dim(128), N), dtype=x.dtype, buffer=nl.sbuf)
  for i in nl.affine_range(M // 128):
    buf[i, 0:128, 0:N] = nl.load(x[i * 128:(i + 1) * 128, 0:N])
    nl.store(out[i * 128:(i + 1) * 128, 0:N], value=nl.exp(buf[i, 0:128, 0:N]))
  return out
