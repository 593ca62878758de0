import math
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(x, w):
  # x: [128, K], w: [K, 512]; out = (x / rms(x)) @ w. The squares are summed by activation_reduce,
  # x is transposed on TensorE with an identity constant, and the projection accumulates into a PSUM
  # tile that is never zero-filled: the first matmul of the group overwrites it.
  k = x.shape[1]
  out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  eye = nl.shared_constant(np.identity(n=128, dtype=np.int8), dtype=x.dtype)
  identity = nl.load(eye)
  t = nl.load(x)
  sumsq = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
  squares = nisa.activation_reduce(op=nl.square, data=t, reduce_op=np.add, reduce_res=sumsq)
  rms = nisa.activation(op=nl.rsqrt, data=sumsq, scale=1.0 / k)
  normed = nl.multiply(t, rms)
  if nisa.get_nc_version() == nisa.nc_version.gen3:
    acc_dtype = x.dtype
  else:
    acc_dtype = nl.float32
  acc = nl.ndarray((128, 512), dtype=acc_dtype, buffer=nl.psum)
  for j in nl.affine_range(math.ceil(k / 128)):
    tT = nisa.nc_matmul(normed[:, j * 128:(j + 1) * 128], identity, is_transpose=True)
    lhs = nl.copy(tT)
    rhs = nl.load(w[j * 128:(j + 1) * 128, :])
    acc[...] += nisa.nc_matmul(lhs, rhs)
  nl.store(out, value=nl.copy(acc))
  return out
