# NKI 0.1: a named arange that starts at a loop offset, compared in a mask, and a write masked by
# a condition on loop variables only.
import math
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def scaled_rows(x):
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  n, m = x.shape
  i_f = nl.arange(m)[None, :]
  carry = nl.zeros((128, 1), dtype=nl.float32, buffer=nl.sbuf)
  for p in nl.sequential_range(math.ceil(n / 128)):
    i_p = p * 128 + nl.arange(128)[:, None]
    v = nl.load(x[i_p, i_f], mask=(i_p < n))
    u = nl.add(v, carry, mask=(i_p < n))
    nl.store(out[i_p, i_f], value=u, mask=(i_p < n))
    carry[...] = nl.copy(v[:, 0:1], mask=p + 1 < math.ceil(n / 128))
  return out
