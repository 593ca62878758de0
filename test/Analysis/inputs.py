# Shapes given for some arguments must cover all of them; a shape for a name that is no argument is a warning.
# RUN: not %accelopt check --no-source %s --inputs 'x=f32[128,512],z=f32[4]' | %FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
# CHECK: inputs.py:[[@LINE+2]]:1: warning: input 'z' is not a parameter of kernel 'kernel' [inputs]
# CHECK: inputs.py:[[@LINE+1]]:15: error: no shape for kernel argument 'y' in the inputs (x=float32[128,512],z=float32[4]) [inputs]
def kernel(x, y):
  out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  t = nl.load(x[0:128, 0:512])
  nl.store(out[0:128, 0:512], value=t)
  return out
# CHECK: 1 kernel, 1 error, 1 warning
