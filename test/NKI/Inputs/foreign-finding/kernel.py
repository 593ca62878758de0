# The kernel is fine; the function it imports from tiles.py makes a tile of 256 partitions.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from .tiles import load_block


@nki.jit
def copy(x):
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(x.shape[0] // 256):
    t = load_block(x, i)
    nl.store(out[i * 256:(i + 1) * 256, :], value=t)
  return out
