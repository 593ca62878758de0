# Masks that reductions honour: a padded sliding window (the mask covers the reduced axis: masked
# elements are left out of the max and the sum), and per-partition statistics (bn_stats,
# bn_aggr) of a partial last tile whose masked-off rows never reach the stored result.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def padded_window(x):
  peak = nl.ndarray((64, 10), dtype=x.dtype, buffer=nl.shared_hbm)
  total = nl.ndarray((64, 10), dtype=x.dtype, buffer=nl.shared_hbm)
  t = nl.load(x)
  ip, j, w = nl.mgrid[0:64, 0:10, 0:3]
  inside = (j + w - 1 >= 0) & (j + w - 1 < 10)
  nl.store(peak, value=nl.max(t[ip, j + w - 1], axis=[2], mask=inside))
  nl.store(total, value=nl.sum(t[ip, j + w - 1], axis=[2], mask=inside))
  return peak, total


@nki.jit
def row_moments(a):
  out = nl.ndarray((a.shape[0], 2), dtype=a.dtype, buffer=nl.shared_hbm)
  ip, jf = nl.mgrid[0:128, 0:256]
  io, jo = nl.mgrid[0:128, 0:2]
  for i in nl.affine_range((a.shape[0] + 127) // 128):
    t = nl.load(a[i * 128 + ip, jf], mask=(i * 128 + ip < a.shape[0]))
    moments = nisa.bn_aggr(nisa.bn_stats(t, dtype=nl.float32))
    nl.store(out[i * 128 + io, jo], value=moments, mask=(i * 128 + io < a.shape[0]))
  return out
