# NKI 0.1: a mask on loop variables only on a statement that defines a name.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def first_only(x):
  out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
  for p in nl.affine_range(2):
    t = nl.load(x[p])
    v = nl.exp(t, mask=(p < 1))
    nl.store(out, value=v)
  return out
