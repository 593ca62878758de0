# RUN: not %accelopt check --no-source %s --inputs 'x=f32[128,512]' | %FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  # Compute engines read SBUF or PSUM; x is still in HBM (nl.load it first).
  # CHECK: operand-buffer.py:[[@LINE+1]]:14: error: nl.exp operand 'x' must be in sbuf or psum, but 'x' is in shared_hbm [operand-buffer]
  y = nl.exp(x[0:128, 0:512])
  t = nl.load(x[0:128, 0:512])
  z = nl.exp(t)
  nl.store(out[0:128, 0:512], value=z)
  return out
# CHECK: 1 kernel, 1 error, 0 warnings
