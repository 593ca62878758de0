# Inputs of compute_at tests (x: f32[512, 512]): a producer nest writes an SBUF
# buffer block by block, a consumer loop reads it back block by block.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((512, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  e = nl.ndarray((2, 4, nl.par_dim(128), 256), dtype=nl.float32, buffer=nl.sbuf)
  w = nl.ndarray((2, nl.par_dim(128), 256), dtype=nl.float32, buffer=nl.sbuf)
  g = nl.ndarray((2, 4, nl.par_dim(128), 1), dtype=nl.float32, buffer=nl.sbuf)
  for h in nl.affine_range(2):
    for m in nl.affine_range(4):
      t = nl.load(x[m * 128:(m + 1) * 128, h * 256:(h + 1) * 256])
      e[h, m, 0:128, 0:256] = nl.exp(t)
  for n in nl.affine_range(4):
    for c in nl.affine_range(2):
      nl.store(out[n * 128:(n + 1) * 128, c * 256:(c + 1) * 256], value=nl.multiply(e[c, n, 0:128, 0:256], 2.0))
  # The second nest has code before its inner loop (compute_at splits it off); its
  # consumer reads the rows in reverse order: not what the same iteration wrote.
  for q in nl.affine_range(2):
    w[q, 0:128, 0:256] = nl.load(x[0:128, q * 256:(q + 1) * 256])
    for m2 in nl.affine_range(4):
      g[q, m2, 0:128, 0:1] = nl.max(nl.add(e[q, m2, 0:128, 0:256], w[q, 0:128, 0:256]), axis=[1], keepdims=True)
  for n2 in nl.affine_range(4):
    nl.store(out[n2 * 128:(n2 + 1) * 128, 0:1], value=g[0, 3 - n2, 0:128, 0:1])
  return out
