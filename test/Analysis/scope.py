# RUN: not %accelopt check --no-source %s --inputs 'x=f32[128,1024]' | %FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  for i in nl.affine_range(2):
    t = nl.load(x[0:128, 512 * i:512 * i + 512])
  # CHECK: scope.py:[[@LINE+1]]:37: error: 't' is defined inside loop L0 ('i') and used outside it; allocate it before the loop (with a block dimension per iteration if needed) [scope]
  nl.store(out[0:128, 0:512], value=t)
  return out
