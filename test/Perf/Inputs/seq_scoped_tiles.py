import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a):
  # a: f32[128, 16384]. Each sequential iteration makes its own 16 KiB/partition tiles (acc, t and
  # two per inner iteration, 18 in all = 288 KiB, more than SBUF). They die with their last read, so
  # a handful is live at a time and nothing needs to spill.
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  for i in nl.sequential_range(4):
    acc = nl.zeros((nl.par_dim(128), 4096), dtype=a.dtype)
    t = nl.load(a[:, i * 4096:(i + 1) * 4096])
    for s in nl.affine_range(8):
      u = nl.multiply(t, s * 0.5)
      v = nl.add(u, t)
      acc[...] += v
    nl.store(out[:, i * 4096:(i + 1) * 4096], value=acc)
  return out
