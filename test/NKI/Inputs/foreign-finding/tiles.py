# A tile helper of the project whose tile is too tall: 256 rows, over the 128 partitions.
import neuronxcc.nki.language as nl

ROWS = 256


def load_block(src, i):
  return nl.load(src[i * ROWS:(i + 1) * ROWS, :])
