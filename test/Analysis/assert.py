# The kernel's own trace-time checks, evaluated on the given shapes.
# RUN: not %accelopt check --no-source %s --inputs 'x=f32[128,512]' | %FileCheck %s
# RUN: %accelopt check --no-source %s --inputs 'x=f32[256,512]' | %FileCheck %s --check-prefix=HOLDS
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  # CHECK: assert.py:[[@LINE+1]]:3: error: assertion failed at trace time: expects 256 rows (check the input shapes) [assert]
  assert x.shape[0] == 256, "expects 256 rows"
  assert x.shape[1] % 128 == 0
  out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  t = nl.load(x[0:128, 0:512])
  nl.store(out[0:128, 0:512], value=t)
  return out
# CHECK: 1 kernel, 1 error, 0 warnings
# HOLDS: 1 kernel, 0 errors, 0 warnings
