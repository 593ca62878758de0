# NKI 0.1: nki.isa under another alias (`ni`), a tensor with a block dimension indexed by its block
# only (`a_sb[k]`), and `+=` of a matmul into a whole PSUM tile.
import numpy as np
from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as ni


@nki.jit
def matmul_k(a, b):
  out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
  a_sb = nl.ndarray((2, nl.par_dim(128), 128), dtype=a.dtype, buffer=nl.sbuf)
  b_sb = nl.ndarray((2, nl.par_dim(128), 512), dtype=b.dtype, buffer=nl.sbuf)
  for k in nl.affine_range(2):
    a_sb[k] = nl.load(a[k * 128:(k + 1) * 128, :])
    b_sb[k] = nl.load(b[k * 128:(k + 1) * 128, :])
  acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
  for k in nl.affine_range(2):
    acc += ni.nc_matmul(a_sb[k, :, :], b_sb[k, :, :])
  nl.store(out, value=nl.copy(acc, dtype=a.dtype))
  return out
