# A tile method accelopt does not know (a gather through an index tile).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def gather_cols(idx, data):
  out = nl.ndarray((128, 8), dtype=data.dtype, buffer=nl.shared_hbm)
  d = nl.load(data)
  i = nl.load(idx)
  g = nl.copy(d.gather_along(i, count=8))
  nl.store(out, value=g)
  return out
