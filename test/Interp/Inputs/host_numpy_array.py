# A row map built as a host numpy array at trace time: refused by name at the call in every layer.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def gather_rows(x):
  out = nl.ndarray((4, 64), dtype=x.dtype, buffer=nl.shared_hbm)
  rows = np.floor(np.linspace(0, 6, 4)).astype(np.int32)
  for i in nl.static_range(len(rows)):
    nl.store(out[i:i + 1, :], value=nl.load(x[rows[i]:rows[i] + 1, :]))
  return out
