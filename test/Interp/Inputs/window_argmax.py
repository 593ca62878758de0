import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(x):
  # x: [128, W * 4]; out[p, w] = the position (0..3) of the first maximum in window w of row p.
  # Windows are the free axes [W, 4] of an nl.mgrid grid; the maximum keeps its reduced axis
  # (keepdims) and broadcasts back against the windows; nisa.iota of a grid field fills the
  # grid's whole shape.
  width = x.shape[1] // 4
  out = nl.ndarray((128, width), dtype=nl.float32, buffer=nl.shared_hbm)
  g = nl.mgrid[0:128, 0:width, 0:4]
  windows = nl.load(x[g.p, 4 * g.x + g.y])
  best = nl.max(windows, axis=[2], keepdims=True)
  is_best = nl.equal(windows, best, dtype=nl.float32)
  position = nisa.iota(g.y, dtype=nl.float32)
  candidates = nl.where(is_best, position, 4.0)
  first = nl.min(candidates, axis=[2])
  nl.store(out, value=first)
  return out
