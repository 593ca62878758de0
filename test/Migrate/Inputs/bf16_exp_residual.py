# A bfloat16 kernel whose activation result (no dtype=) is a bfloat16 tile.
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def exp_residual(a):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  x = nl.load(a)
  e = nisa.activation(nl.exp, data=x)
  nl.store(out, value=nl.subtract(e, nl.exp(x)))
  return out
