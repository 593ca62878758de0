# Direction pair "forward_load" (after): forward_load_before.py rewritten by the op(s) below
# (nkibench/manifest.json, expect.ops of forward_load_after).
#
# Input (HBM, float32):
#   x   [M, N] = [512, 2048]
# Output:
#   out [M / 2, N] = [256, 2048]   out[64 t + i] = x[128 t + i] * x[128 t + 64 + i]
#
# AFTER (forward_load S7): the lower rows are loaded again onto partitions 0..63 (512 KiB more
# DMA per tile) instead of copied; the kernel is DMA-bound, so this is slower.
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
    low = nl.load(x[t * 128 + (64 + i_h), i_f])
    y = nl.multiply(tile[i_h, i_f], low)
    nl.store(out[t * 64 + i_h, i_f], value=y)
  return out
