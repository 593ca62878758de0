# Tiles filled whole by a load (t[...] = nl.load(...)) into buffers allocated in the loop body.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def scaled_sum(x, w, bias):
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  kept = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.sbuf)
  for b in nl.sequential_range(2):
    bt = nl.ndarray((128, 128), dtype=bias.dtype, buffer=nl.sbuf)
    bt[...] = nl.load(bias[0:128, 0:128])
    for k in nl.sequential_range(2):
      wt = nl.ndarray((128, 128), dtype=w.dtype, buffer=nl.sbuf)
      wt[...] = nl.load(w[k * 128:(k + 1) * 128, 0:128])
      xt = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.sbuf)
      xt[...] = nl.load(x[b, k * 128:(k + 1) * 128, 0:128])
      kept[...] = nl.load(bias[0:128, 0:128])
      y = nl.multiply(xt, wt[...])
      y2 = nl.add(y, bt)
      y3 = nl.add(y2, kept)
      nl.store(out[b, k * 128:(k + 1) * 128, 0:128], value=y3)
    # A sibling loop reusing the counter name 'k'.
    for k in nl.sequential_range(2):
      z = nl.load(x[b, k * 128:(k + 1) * 128, 0:64])
      nl.store(out[b, k * 128:(k + 1) * 128, 0:64], value=z)
  return out
