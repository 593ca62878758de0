# NKI 0.1: nisa.iota of a product of two grid fields: not an integer combination, no pattern.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def products(a):
  out = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
  g = nl.mgrid[0:128, 0:8]
  ids = nisa.iota(g.p * g.x, dtype=nl.int32)
  nl.store(out[g.p, g.x], value=nl.add(nl.load(a[g.p, g.x]), ids, dtype=nl.float32))
  return out
