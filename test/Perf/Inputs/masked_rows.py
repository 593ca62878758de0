import math
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a, g):
  # a: f32[300, 512], g: f32[512]; out = a / rms(a) * g over row tiles of 128, the last one masked.
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  ix, iw, iy = nl.mgrid[0:128, 0:1, 0:a.shape[1]]
  g_tile = nl.load(g.reshape((1, g.shape[0]))[iw, iy])
  for i in nl.affine_range(math.ceil(a.shape[0] / 128)):
    a_tile = nl.load(a[i * 128 + ix, iy], mask=(i * 128 + ix < a.shape[0]))
    mean = nl.sum(nl.square(a_tile), axis=[1]) / a.shape[1]
    out_tile = nl.multiply(a_tile, nl.rsqrt(mean))
    out_tile[...] = nl.multiply(out_tile, g_tile.broadcast_to((128, g.shape[0])), mask=(i * 128 + ix < a.shape[0]))
    nl.store(out[i * 128 + ix, iy], value=out_tile, mask=(i * 128 + ix < a.shape[0]))
  return out
