# nl.dropout with the drop probability a kernel argument (a LoRA-style input dropout).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def drop_scale(x, rate):
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(x.shape[0] // 128):
    t = nl.load(x[i * 128:(i + 1) * 128, :])
    d = nl.dropout(t, rate)
    nl.store(out[i * 128:(i + 1) * 128, :], value=nl.multiply(d, 3.0))
  return out
