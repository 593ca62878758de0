# Two independent load/store pairs in one loop: every legal rewrite (fission,
# split, unroll) gives the same estimate or a slower one, so the search must
# keep this kernel as it is.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(a, b):
  M, N = a.shape
  out_a = nl.ndarray((M, N), dtype=np.float32, buffer=nl.shared_hbm)
  out_b = nl.ndarray((M, N), dtype=np.float32, buffer=nl.shared_hbm)
  for m in nl.affine_range(M // 128):
    ta = nl.load(a[m * 128 + nl.arange(128)[:, None], nl.arange(N)[None, :]])
    nl.store(out_a[m * 128 + nl.arange(128)[:, None], nl.arange(N)[None, :]], value=ta)
    tb = nl.load(b[m * 128 + nl.arange(128)[:, None], nl.arange(N)[None, :]])
    nl.store(out_b[m * 128 + nl.arange(128)[:, None], nl.arange(N)[None, :]], value=tb)
  return out_a, out_b
