import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(x):
  # x: f32[256, 512]. Three pieces of work the model cannot trace, planted on purpose.
  out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  stats = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.shared_hbm)
  grid = nl.mgrid[0:128, 0:512]
  # 1. A load indexed with an object's fields the front end does not resolve: the model cannot size it.
  t = nl.load(x[grid.p, grid.x])
  # 2. A call the model does not know.
  s = nisa.bn_stats(t, dtype=nl.float32)
  # 3. A store of that unknown value.
  nl.store(stats, value=s)
  nl.store(out, value=nl.add(t, t))
  return out
