# A nested ISA call evaluated only under a condition cannot be hoisted in front of its statement.
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def maybe_inverse(a, flip):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  x = nl.load(a)
  y = nisa.reciprocal(x) if flip > 0 else x
  nl.store(out, value=nl.add(y, nisa.iota(nl.arange(8)[None, :], dtype=nl.int32)))
  return out
