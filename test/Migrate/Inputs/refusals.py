# NKI 0.1 constructs the migration leaves to the user, one per line below.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 1024), dtype=np.float32, buffer=nl.shared_hbm)
  t = nl.ndarray((nl.par_dim(128), 1024), dtype=np.float32, buffer=nl.sbuf)
  u = nl.ndarray((nl.par_dim(128), 1024), dtype=np.float32, buffer=nl.sbuf)
  # a flattened [8, 128] grid is an access pattern, written by nisa.tensor_copy (migrated)
  t[nl.arange(128)[:, None, None], 128 * nl.arange(8)[None, :, None] + nl.arange(128)[None, None, :]] = nl.exp(
      x[nl.arange(128)[:, None, None], nl.arange(8)[None, :, None], nl.arange(128)[None, None, :]])
  # a strided index into a tensor whose shape the trace does not know (no inputs)
  nl.store(x[nl.arange(128)[:, None], 2 * nl.arange(64)[None, :]], value=t[nl.arange(128)[:, None], nl.arange(64)[None, :]])
  # a mask that keeps the end of the tile; one on loop variables alone becomes `if` (migrated)
  u[nl.arange(128)[:, None], nl.arange(1024)[None, :]] = nl.exp(t, mask=(nl.arange(128)[:, None] >= 28))
  u[nl.arange(128)[:, None], nl.arange(1024)[None, :]] = nl.exp(t, mask=(nl.program_id(0) < 1))
  # an ISA call whose result is not assigned (hoisted into a tile)
  nl.store(out, value=nisa.reciprocal(u))
  return out
