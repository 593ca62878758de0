# Reductions over listed free axes with gaps (a pooling window's interleaved axes, [1, 3] of a
# grouped gather) and over a run without gaps, which reduces to the end (kept as 1s with keepdims).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def pool_axes(x):
  pooled = nl.ndarray((32, 8, 12), dtype=x.dtype, buffer=nl.shared_hbm)
  group_max = nl.ndarray((32, 3, 1), dtype=x.dtype, buffer=nl.shared_hbm)
  row_max = nl.ndarray((32, 1, 1), dtype=x.dtype, buffer=nl.shared_hbm)
  t = nl.load(x)
  c, h, dh, w, dw = nl.mgrid[0:32, 0:8, 0:2, 0:12, 0:2]
  nl.store(pooled, value=nl.sum(t[c, 2 * h + dh, 2 * w + dw], axis=[2, 4]) * 0.25)
  ip, ia, ig, ie = nl.mgrid[0:32, 0:16, 0:3, 0:8]
  nl.store(group_max, value=nl.max(t[ip, ia, ig * 8 + ie], axis=[1, 3]))
  nl.store(row_max, value=nl.max(t, axis=[1], keepdims=True))
  return pooled, group_max, row_max
