import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((64, 128, 1024), dtype=x.dtype, buffer=nl.shared_hbm)
  tiles = nl.ndarray((64, nl.par_dim(128), 1024), dtype=nl.float32, buffer=nl.sbuf)
  for i in nl.affine_range(64):
    tiles[i, nl.arange(128)[:, None], nl.arange(1024)[None, :]] = nl.load(
        x[i, nl.arange(128)[:, None], nl.arange(1024)[None, :]])
    nl.store(out[i, nl.arange(128)[:, None], nl.arange(1024)[None, :]],
             value=tiles[i, nl.arange(128)[:, None], nl.arange(1024)[None, :]])
  return out
