import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(theta, m, v, g):
  out = nl.ndarray((256, 1024), dtype=np.float32, buffer=nl.shared_hbm)
  zero = nl.ndarray((nl.par_dim(128), 1), dtype=np.float32, buffer=nl.sbuf)
  zero[...] = nisa.memset(shape=(128, 1), value=0.0, dtype=np.float32)
  for i in nl.affine_range(2):
    for j in nl.affine_range(2):
      rows = i * 128 + nl.arange(128)[:, None]
      cols = j * 512 + nl.arange(512)[None, :]
      tt = nl.load(theta[rows, cols])
      mt = nl.load(m[rows, cols])
      vt = nl.load(v[rows, cols])
      gt = nl.load(g[rows, cols])
      m1 = nisa.tensor_scalar(data=mt, op0=nl.multiply, operand0=0.9)
      g1 = nisa.tensor_scalar(data=gt, op0=nl.multiply, operand0=0.1)
      mn = nl.add(m1, g1)
      v1 = nisa.tensor_scalar(data=vt, op0=nl.multiply, operand0=0.999)
      g2 = nisa.tensor_scalar(data=gt, op0=nl.multiply, operand0=0.001)
      g3 = nl.multiply(g2, gt)
      vn = nl.add(v1, g3)
      sq = nisa.activation(op=nl.sqrt, data=vn, bias=zero, scale=1000.0)
      de = nisa.tensor_scalar(data=sq, op0=nl.add, operand0=1e-08)
      rc = nisa.reciprocal(data=de)
      up = nl.multiply(mn, rc)
      res = nl.subtract(tt, up)
      nl.store(out[rows, cols], value=res)
  return out
