# RUN: not %accelopt check --no-source %s --inputs 'a=f32[128,128],b=f32[128,1024]' | %FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(a, b):
  out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
  a_sb = nl.load(a[0:128, 0:128])
  b_sb = nl.load(b[0:128, 0:1024])
  # CHECK: psum-bank.py:[[@LINE+1]]:9: error: PSUM tile 'acc' [128, 1024] needs 4096 bytes per partition, more than one 2048-byte PSUM bank (at most 512 float32 elements) [psum-bank]
  acc = nl.zeros((128, 1024), nl.float32, buffer=nl.psum)
  # CHECK: psum-bank.py:[[@LINE+1]]:31: error: nisa.nc_matmul operand 'moving' has 1024 free elements per partition; the limit is 512 [matmul-operands]
  acc += nisa.nc_matmul(a_sb, b_sb)
  res = nl.copy(acc)
  nl.store(out[0:128, 0:1024], value=res)
  return out
