# Code the trace-time analysis cannot follow is reported, not guessed at.
# RUN: %accelopt check --no-source %s --inputs 'x=f32[128,512]' | %FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  n = 0
  # CHECK: trace-time.py:[[@LINE+1]]:3: warning: while loops are not analysed [trace-time]
  while n < 2:
    n += 1
  t = nl.load(x[0:128, 0:512])
  nl.store(out[0:128, 0:512], value=t)
  return out
# CHECK: 1 kernel, 0 errors, 1 warning
