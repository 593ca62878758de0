# NKI 0.1 transpose of the free dimensions through index arithmetic with factors the trace
# evaluates (the transpose2d tutorial form).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def swap_free(x, fa, fb):
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  rows, _ = x.shape
  t = nl.load(x)
  i_p = nl.arange(rows)[:, None, None]
  i_a = nl.arange(fa)[None, :, None]
  i_b = nl.arange(fb)[None, None, :]
  s = nl.ndarray(shape=(rows, fb * fa), dtype=x.dtype)
  s[i_p, i_b * fa + i_a] = nl.copy(t[i_p, i_a * fb + i_b])
  nl.store(out, value=s)
  return out
