import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(4):
    t = nl.load(x[i * 128:(i + 1) * 128, 0:512])
    nl.store(out[0:128, 0:512], value=t)
  return out
