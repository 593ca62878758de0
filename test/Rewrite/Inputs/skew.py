# A 2-deep nest with a dependence of distance (1, -1): iteration (i, j) reads
# what iteration (i - 1, j + 1) wrote, so the loops cannot be interchanged.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=np.float32, buffer=nl.shared_hbm)
  buf = nl.ndarray((4, 5, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.sbuf)
  for a in nl.affine_range(4):
    for b in nl.affine_range(5):
      buf[a, b, nl.arange(128)[:, None], nl.arange(512)[None, :]] = nl.load(x[nl.arange(128)[:, None], nl.arange(512)[None, :]])

  for i in nl.sequential_range(3):
    for j in nl.sequential_range(4):
      buf[i + 1, j, nl.arange(128)[:, None], nl.arange(512)[None, :]] = nl.exp(
          buf[i, j + 1, nl.arange(128)[:, None], nl.arange(512)[None, :]])

  nl.store(out[nl.arange(128)[:, None], nl.arange(512)[None, :]],
           value=buf[3, 0, nl.arange(128)[:, None], nl.arange(512)[None, :]])
  return out
