import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def isa_operand(x, y):
  out = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
  xT = nisa.nc_transpose(nl.load(x))
  ps = nisa.nc_matmul(xT, nl.load(y))
  nl.store(out, value=nl.copy(ps))
  return out
