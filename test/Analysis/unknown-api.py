# RUN: %accelopt check --no-source %s --inputs 'x=f32[128,512]' | %FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  t = nl.load(x[0:128, 0:512])
  # CHECK: unknown-api.py:[[@LINE+1]]:7: warning: unknown NKI API 'nl.frobnicate'; its effects are not analysed [unknown-api]
  u = nl.frobnicate(t)
  nl.store(out[0:128, 0:512], value=t)
  return out
# CHECK: 1 kernel, 0 errors, 1 warning
