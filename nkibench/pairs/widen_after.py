# Direction pair "widen" (after): widen_before.py rewritten by the op(s) below
# (nkibench/manifest.json, expect.ops of widen_after).
#
# AFTER (widen L0 by 8): 4 iterations over 1024-column tiles: every DMA moves
# 512 KiB (4 KiB per partition), 12 DMAs and 8 engine instructions.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a, b):
  P, N = a.shape
  out = nl.ndarray((P, N), dtype=a.dtype, buffer=nl.shared_hbm)
  i_p = nl.arange(128)[:, None]
  i_f = nl.arange(128)[None, :]
  for j in nl.affine_range(0, N // 128, 8):
    a_tile = nl.load(a[i_p, j * 128 + nl.arange(1024)[None, :]])
    b_tile = nl.load(b[i_p, j * 128 + nl.arange(1024)[None, :]])
    e_tile = nl.exp(a_tile)
    res = nl.multiply(e_tile, b_tile)
    nl.store(out[i_p, j * 128 + nl.arange(1024)[None, :]], value=res)
  return out
