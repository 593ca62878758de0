# Direction pair "chunk_scan" (after): chunk_scan_before.py rewritten by the op(s) below
# (nkibench/manifest.json, expect.ops of chunk_scan_after).
#
# AFTER (chunk_scan S4, 512 columns): 4 scans of 512 columns, each from the last
# column of the one before; the same elements in the same order.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(a, b):
  P, N = a.shape
  out = nl.ndarray((P, N), dtype=a.dtype, buffer=nl.shared_hbm)
  a_t = nl.load(a[0:128, 0:2048])
  b_t = nl.load(b[0:128, 0:2048])
  h = nl.ndarray((nl.par_dim(128), 2048), dtype=nl.float32, buffer=nl.sbuf)
  h[0:128, 0:512] = nisa.tensor_tensor_scan(a_t[0:128, 0:512], b_t[0:128, 0:512], initial=0.0, op0=np.multiply, op1=np.add)
  for chunk in nl.sequential_range(1, 4):
    h[0:128, chunk * 512:(chunk + 1) * 512] = nisa.tensor_tensor_scan(a_t[0:128, chunk * 512:(chunk + 1) * 512], b_t[0:128, chunk * 512:(chunk + 1) * 512], initial=h[0:128, chunk * 512 - 1:chunk * 512], op0=np.multiply, op1=np.add)
  nl.store(out[0:128, 0:2048], value=h)
  return out
