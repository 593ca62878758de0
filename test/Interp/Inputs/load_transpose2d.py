import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def transpose_tiles(a):
  # a: f32[256, 64]; out = a^T, each 128-row slice transposed by the DMA on its way into SBUF.
  out = nl.ndarray((a.shape[1], a.shape[0]), dtype=a.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(a.shape[0] // 128):
    t = nl.load_transpose2d(a[i * 128:(i + 1) * 128, :])
    nl.store(out[:, i * 128:(i + 1) * 128], value=t)
  return out
