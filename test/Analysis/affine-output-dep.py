# RUN: not %accelopt check --no-source %s --inputs 'x=f32[128,2048]' | %FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  acc = nl.zeros((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
  last = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
  clash = nl.ndarray((nl.par_dim(128), 32), dtype=nl.float32, buffer=nl.sbuf)
  for i in nl.affine_range(4):
    t = nl.load(x[0:128, 512 * i:512 * i + 512])
    # Accumulation across iterations is allowed.
    acc[0:128, 0:512] += t
    # CHECK: affine-output-dep.py:[[@LINE+1]]:5: error: different iterations of affine_range loop L0 ('i', line 12) write the same elements of 'last'; index it by 'i', accumulate with +=, or use sequential_range [affine-output-dep]
    last[0:128, 0:512] = nl.copy(t)
  for j in nl.sequential_range(4):
    # A sequential_range may overwrite.
    last[0:128, 0:512] = nl.load(x[0:128, 512 * j:512 * j + 512])
  # A transpose of 4 x 8 columns: i2 * 4 + i1 takes each column once over the loops' bounds (the interval
  # test alone says i1 - i1' + 4 * (i2 - i2') may be zero), so no two iterations write the same column.
  flip = nl.ndarray((nl.par_dim(128), 32), dtype=nl.float32, buffer=nl.sbuf)
  for i1 in nl.affine_range(4):
    for i2 in nl.affine_range(8):
      flip[0:128, i2 * 4 + i1] = nl.copy(acc[0:128, i1 * 8 + i2])
  # One column more per step than there are i1 values: columns 8 * i2 + i1 and 8 * (i2 + 1) + i1 - 9 meet.
  # CHECK: affine-output-dep.py:[[@LINE+3]]:7: error: different iterations of affine_range loop L4 ('k1', line [[@LINE+1]]) write the same elements of 'clash'
  for k1 in nl.affine_range(16):
    for k2 in nl.affine_range(2):
      clash[0:128, k2 * 8 + k1] = nl.copy(acc[0:128, k1:k1 + 1])
  nl.store(out[0:128, 0:512], value=acc)
  return out
# CHECK-NOT: error
# CHECK: 1 kernel, 2 errors, 0 warnings
