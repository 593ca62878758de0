# RUN: not %accelopt check --no-source %s --inputs 'x=f32[128,512]' | %FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  # CHECK: index-rank.py:[[@LINE+1]]:15: error: too many indices for tensor 'x' of rank 2 [index-rank]
  t = nl.load(x[0:128, 0:512, 0])
  u = nl.load(x[0:128, ...])
  nl.store(out[0:128, 0:512], value=u)
  return out
# CHECK: 1 kernel, 1 error, 0 warnings
