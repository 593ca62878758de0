# RUN: not %accelopt check --no-source %s --inputs 'a=f32[128,512]' | %FileCheck %s
# nki (0.2+) destination-passing calls: dst has the result's shape; nc_matmul's dst is an fp32 PSUM tile.
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(a):
  out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
  nisa.dma_copy(dst=t, src=a[0:128, 0:512])
  small = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
  # CHECK: dst-shape.py:[[@LINE+1]]:26: error: nisa.tensor_scalar produces a [128,512] tile but its dst 'small' is [128,256] [dst-shape]
  nisa.tensor_scalar(dst=small, data=t, op0=nl.add, operand0=1.0)
  acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
  # CHECK: dst-shape.py:[[@LINE+1]]:22: error: nisa.nc_matmul writes its result to PSUM, but 'acc' is in sbuf [matmul-operands]
  nisa.nc_matmul(dst=acc, stationary=t[0:128, 0:128], moving=t, accumulate=False)
  half = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.psum)
  # CHECK: dst-shape.py:[[@LINE+1]]:22: error: nisa.nc_matmul accumulates in fp32: its dst 'half' must be float32 (on trn1/trn2) [dst-shape]
  nisa.nc_matmul(dst=half, stationary=t[0:128, 0:128], moving=t)
  res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
  nisa.tensor_copy(dst=res, src=half)
  # CHECK: dst-shape.py:[[@LINE+1]]:44: error: nisa.dma_copy cannot read PSUM from NKI 0.3; copy 'half' to SBUF with nisa.tensor_copy first [operand-buffer]
  nisa.dma_copy(dst=out[0:128, 0:512], src=half)
  return out
