import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  # x: f32[128, 512]. The inner loop rebinds `i`, so the read of buf is indexed by the inner loop.
  out = nl.ndarray((128, 2048), dtype=x.dtype, buffer=nl.shared_hbm)
  buf = nl.ndarray((4, nl.par_dim(128), 128), dtype=nl.float32, buffer=nl.sbuf)
  for i in nl.affine_range(4):
    buf[i, 0:128, 0:128] = nl.load(x[0:128, i * 128:(i + 1) * 128])
    for i in nl.affine_range(4):
      t = nl.exp(buf[i, 0:128, 0:128])
      nl.store(out[0:128, i * 128:(i + 1) * 128], value=t)
  return out
