# RUN: not %accelopt check --no-source %s --inputs 'x=f32[128,512]' | %FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  # CHECK: call-args.py:[[@LINE+1]]:32: warning: unknown keyword 'frobnicate' for nl.load [call-args]
  t = nl.load(x[0:128, 0:512], frobnicate=True)
  # CHECK: call-args.py:[[@LINE+1]]:35: warning: too many arguments to nl.exp [call-args]
  u = nl.exp(t, nl.float32, None, 7)
  # CHECK: call-args.py:[[@LINE+1]]:7: error: nl.add is missing its required argument 'y' [call-args]
  v = nl.add(t)
  nl.store(out[0:128, 0:512], value=u)
  return out
# CHECK: 1 kernel, 1 error, 2 warnings
