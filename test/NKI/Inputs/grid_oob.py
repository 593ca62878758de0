import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def grid_oob(a):
  # a: f32[256, 512]. Launched as grid_oob[3](a), instance 2 reads rows 256..383: past the tensor.
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  p = nl.program_id(0)
  t = nl.load(a[p * 128:(p + 1) * 128, :])
  nl.store(out[p * 128:(p + 1) * 128, :], value=nl.exp(t))
  return out


if __name__ == "__main__":
  import numpy as np
  grid_oob[3](np.zeros((256, 512), dtype=np.float32))
