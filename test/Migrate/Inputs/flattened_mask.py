# A ragged prefix of a flattened tensor: the mask keeps the first n elements of x in row-major order,
# whole rows of each 128 x 256 tile and then part of one row.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def ragged_exp(x, n):
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  ip, jf = nl.mgrid[0:128, 0:256]
  for t in nl.affine_range(x.shape[0]):
    flat = t * 32768 + 256 * ip + jf  # element offset
    v = nl.load(x[t, ip, jf], mask=flat < n)
    e = nisa.activation(op=nl.exp, data=v, mask=flat < n)
    w = nl.multiply(e, 2.0, mask=(flat <= n - 1))
    nl.store(out[t, ip, jf], value=w, mask=flat < n)
  return out
