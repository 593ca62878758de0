# Structurally like nkibench/pairs/hoist_load_before.py, written by someone else:
# other names, another size, the same loop-invariant weight load.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def project(actT, weights):
  depth, rows = actT.shape
  _, cols = weights.shape
  result = nl.ndarray((rows, cols), dtype=actT.dtype, buffer=nl.shared_hbm)
  for r in nl.affine_range(rows // 128):
    wt = nl.load(weights[0:depth, 0:cols])
    a = nl.load(actT[0:depth, r * 128:(r + 1) * 128])
    acc = nisa.nc_matmul(a, wt)
    y = nl.copy(acc, dtype=result.dtype)
    nl.store(result[r * 128:(r + 1) * 128, 0:cols], value=y)
  return result
