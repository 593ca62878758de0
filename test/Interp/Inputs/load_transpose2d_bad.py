import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def bad(a):
  # a: f32[128, 256]: its transpose would span 256 partitions; an SBUF tile is not a DMA source.
  out = nl.ndarray((128, 128), dtype=a.dtype, buffer=nl.shared_hbm)
  wide = nl.load_transpose2d(a)
  t = nl.load(a[:, 0:128])
  again = nl.load_transpose2d(t)
  nl.store(out, value=again)
  return out
