import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def cast_transpose(a):
  # a: f16[192, 32] (whole tensor, more rows than partitions: they become free elements);
  # out = exp(a^T) in fp32, the load casting as it transposes.
  out = nl.ndarray((32, 192), dtype=nl.float32, buffer=nl.shared_hbm)
  t = nl.load_transpose2d(a, dtype=nl.float32)
  nl.store(out, value=nl.exp(t))
  return out
