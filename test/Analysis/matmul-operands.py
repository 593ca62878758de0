# RUN: not %accelopt check --no-source %s --inputs 'a=f32[128,256],b=f32[64,512]' | %FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(a, b):
  out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  a_sb = nl.load(a[0:128, 0:256])
  b_sb = nl.load(b[0:64, 0:512])
  acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
  # Stationary wider than the 128 PE columns, and K differs between the operands.
  # CHECK: matmul-operands.py:[[@LINE+2]]:3: error: nisa.nc_matmul contracts over the partition dimension: stationary has 128 rows but moving has 64 [matmul-operands]
  # CHECK: matmul-operands.py:[[@LINE+1]]:25: error: nisa.nc_matmul operand 'stationary' has 256 free elements per partition; the limit is 128 [matmul-operands]
  acc += nisa.nc_matmul(a_sb, b_sb)
  # Operands must come from SBUF, not PSUM.
  # CHECK: matmul-operands.py:[[@LINE+3]]:3: error: nisa.nc_matmul contracts over the partition dimension: stationary has 128 rows but moving has 64 [matmul-operands]
  # CHECK: matmul-operands.py:[[@LINE+2]]:25: error: nisa.nc_matmul operand 'stationary' must be in sbuf, but 'acc' is in psum [matmul-operands]
  # CHECK: matmul-operands.py:[[@LINE+1]]:25: error: nisa.nc_matmul operand 'stationary' has 512 free elements per partition; the limit is 128 [matmul-operands]
  acc += nisa.nc_matmul(acc, b_sb[0:64, 0:512])
  # The result goes to PSUM, never straight into SBUF.
  res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
  # CHECK: matmul-operands.py:[[@LINE+1]]:3: error: nisa.nc_matmul writes its result to PSUM, but 'res' is in sbuf [matmul-operands]
  res[...] = nisa.nc_matmul(a_sb[0:64, 0:128], b_sb)
# CHECK: 1 kernel, 6 errors, 0 warnings
  nl.store(out[0:128, 0:512], value=res)
  return out
