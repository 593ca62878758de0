# nl.arange bounds that differ between iterations of a static_range (overlapping windows, as the
# bilinear-interpolation sample writes them): integers the trace does not know, never a type error.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def windows(a):
  out = nl.ndarray((128, 300), dtype=a.dtype, buffer=nl.shared_hbm)
  for h in nl.static_range(3):
    lo = max(0, h * 100)
    hi = min(h * 100 + 100, 300)
    i_f = nl.arange(lo, hi)[None, :]
    i_p = nl.arange(128)[:, None]
    nl.store(out[i_p, i_f], value=nl.load(a[i_p, i_f]))
  return out
