# A sub-kernel written with tile operators only (no NKI call), decorated like the rotary tutorial's core.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def rotate_core(x_tile, out_tile):
  half = x_tile.shape[-1] // 2
  out_tile[:, :half] = x_tile[:, half:] * -1.0
  out_tile[:, half:] = x_tile[:, :half] + x_tile[:, half:]


@nki.jit
def rotate(a):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  t = nl.load(a)
  o = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
  rotate_core(t, o)
  nl.store(out, value=o)
  return out
