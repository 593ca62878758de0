# A module-level function that computes on tiles, called by the kernel in a loop (a sub-kernel, as the
# rotary tutorial's core): the front end traces it in place with the module's names as its globals.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

SCALE = 0.5


def scaled_exp(src, dst):
  e = nl.reciprocal(src)
  dst[...] = nl.multiply(e, SCALE)


@nki.jit
def rows_exp(a):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  SCALE = 3.0  # a local of the kernel: the function still reads the module's SCALE
  for i in nl.affine_range(a.shape[0] // 128):
    t = nl.load(a[i * 128:(i + 1) * 128, :])
    o = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    scaled_exp(t, o)
    nl.store(out[i * 128:(i + 1) * 128, :], value=o)
  return out
