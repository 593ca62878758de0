# RUN: not %accelopt check --no-source %s --inputs 'x=f32[128,2048]' | %FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  acc = nl.zeros((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
  last = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
  for i in nl.affine_range(4):
    t = nl.load(x[0:128, 512 * i:512 * i + 512])
    # Accumulation across iterations is allowed.
    acc[0:128, 0:512] += t
    # CHECK: affine-output-dep.py:[[@LINE+1]]:5: error: different iterations of affine_range loop L0 ('i', line 11) write the same elements of 'last'; index it by 'i', accumulate with +=, or use sequential_range [affine-output-dep]
    last[0:128, 0:512] = nl.copy(t)
  for j in nl.sequential_range(4):
    # A sequential_range may overwrite.
    last[0:128, 0:512] = nl.load(x[0:128, 512 * j:512 * j + 512])
  nl.store(out[0:128, 0:512], value=acc)
  return out
# CHECK-NOT: error
# CHECK: 1 kernel, 1 error, 0 warnings
