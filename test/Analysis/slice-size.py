# RUN: not %accelopt check --no-source %s --inputs 'x=f32[128,512]' | %FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  for i in nl.affine_range(4):
    # A tile's shape is fixed at trace time: its size may not depend on i.
    # CHECK: slice-size.py:[[@LINE+1]]:26: error: slice '0:i + 1' does not have a constant size [slice-size]
    t = nl.load(x[0:128, 0:i + 1])
    u = nl.load(x[0:128, 128 * i:128 * i + 128])
    nl.store(out[0:128, 128 * i:128 * i + 128], value=u)
  return out
# CHECK: 1 kernel, 1 error, 0 warnings
