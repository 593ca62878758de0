# t.view(dtype) reads a tile's bytes as another dtype (little-endian): fp32 [128, 64] as uint8 [128, 256].
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def bytes_of(x):
  out = nl.ndarray((128, 256), dtype=nl.uint8, buffer=nl.shared_hbm)
  t = nl.load(x)
  b = t.view(nl.uint8)
  nl.store(out, value=b)
  return out
