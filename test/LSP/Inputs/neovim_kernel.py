import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((512, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(4):  # é€😀
    s = "é😀"; t = nl.load(x[i * 128:(i + 1) * 128, 0:512])
    nl.store(out[i * 128:(i + 1) * 128, 0:512], value=t)  # ü
  big = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.sbuf)
  return out
