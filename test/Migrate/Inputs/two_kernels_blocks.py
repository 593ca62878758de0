# Two kernels in one file that each allocate a tensor with block dimensions under the same name.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def double(a):
  out = nl.ndarray((128, 1024), dtype=a.dtype, buffer=nl.shared_hbm)
  buf = nl.ndarray((2, nl.par_dim(128), 512), dtype=a.dtype, buffer=nl.sbuf)
  for j in nl.affine_range(2):
    buf[j, :, :] = nl.load(a[:, j * 512:(j + 1) * 512])
    nl.store(out[:, j * 512:(j + 1) * 512], value=nl.multiply(buf[j, :, :], 2.0))
  return out


@nki.jit
def negate(a):
  out = nl.ndarray((128, 1024), dtype=a.dtype, buffer=nl.shared_hbm)
  buf = nl.ndarray((2, nl.par_dim(128), 512), dtype=a.dtype, buffer=nl.sbuf)
  for j in nl.affine_range(2):
    buf[j, :, :] = nl.load(a[:, j * 512:(j + 1) * 512])
    nl.store(out[:, j * 512:(j + 1) * 512], value=nl.negative(buf[j, :, :]))
  return out
