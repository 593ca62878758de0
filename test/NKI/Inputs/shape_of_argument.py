import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def same_shape(a, b):
  # out takes a's shape whole; indexed with two, three or an ellipsis of indices it stays legal
  # whatever the rank of a turns out to be.
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  acc = nl.ndarray(b.shape, dtype=nl.float32, buffer=nl.shared_hbm)
  i_p = nl.arange(128)[:, None]
  i_f = nl.arange(a.shape[-1])[None, :]
  t = nl.load(a[0, i_p, i_f])
  nl.store(out[0, i_p, i_f], value=nl.exp(t))
  nl.store(acc[...], value=nl.load(b[...]))
  return out, acc


@nki.jit
def fixed_rank(a):
  # A shape spelled with its rank stays checked: a rank-2 tensor indexed three times is an error.
  out = nl.ndarray((a.shape[0], a.shape[1]), dtype=a.dtype, buffer=nl.shared_hbm)
  i_p = nl.arange(128)[:, None]
  i_f = nl.arange(512)[None, :]
  nl.store(out[0, i_p, i_f], value=nl.load(a[i_p, i_f]))
  return out
