# NKI 0.1 ISA calls that return their result inside expressions and other calls' arguments.
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def mix_transposed(a, b):
  n, m = b.shape
  out = nl.ndarray((2, n, n), dtype=a.dtype, buffer=nl.shared_hbm)
  rows = nl.ndarray((n, m), dtype=b.dtype, buffer=nl.shared_hbm)
  x = nl.load(a)
  y = nl.load(b)
  for i in nl.affine_range(2):
    # the transpose (PE, into PSUM) read by an expression
    z = x * nisa.nc_transpose(x) + i
    # nested twice, with a keyword the nki signature lacks
    w = nl.add(z, nisa.activation(op=nl.exp, data=nisa.nc_transpose(z), dtype=nl.float32))
    nl.store(out[i], value=w)
  nl.store(rows, value=nisa.reciprocal(nl.add(nisa.nc_matmul(x, y), 2.0)))
  return out, rows
