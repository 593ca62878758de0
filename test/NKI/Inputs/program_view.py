import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  # x: [B, S, D] with S > 128, launched as kernel[B](x): instance b scales its batch's first 128 rows.
  # The view x[b] is indexed by the program id, which is unknown until launch; its subscript is
  # still a [128, D] tile.
  b = nl.program_id(axis=0)
  rows = nl.ds(start=0, size=128)
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  batch = x[b]
  i_p = nl.arange(128)[:, None]
  i_f = nl.arange(x.shape[-1])[None, :]
  t = nl.load(batch[i_p, i_f])
  staged = nl.ndarray((nl.par_dim(t.shape[0]), t.shape[1]), dtype=t.dtype, buffer=nl.sbuf)
  staged[...] = nl.multiply(t, 2.0)
  nl.store(out[b, rows, :], value=staged)
  return out
