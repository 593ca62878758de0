# NKI 0.1: a named nl.mgrid object indexed through its fields (g.p, g.x, g.y), an index expression
# held in a name, and nisa.iota of an integer combination of the grid's fields.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def ramp_add(a):
  out = nl.ndarray((128, 4, 8), dtype=nl.float32, buffer=nl.shared_hbm)
  g = nl.mgrid[0:128, 0:4, 0:8]
  v = nl.load(a[g.p, g.x, g.y])
  ramp = 8 * g.x + g.y + 3
  ids = nisa.iota(ramp + 2 * g.p, dtype=nl.int32)
  w = nl.add(v, ids, dtype=nl.float32)
  nl.store(out[g.p, g.x, g.y], value=w)
  return out
