# Sizes, strides and trip counts past 64 bits (as a fuzzer writes them) saturate instead of wrapping:
# no negative KiB, no wrapped bound, no signed overflow under UBSan (the ASan run of this test).
# RUN: not %accelopt check --no-source %s --inputs 'x=f32[128,512]' | %FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  # CHECK: huge-sizes.py:[[@LINE+1]]:10: warning: SBUF tensors need {{[1-9][0-9]+}} KiB per partition
  huge = nl.zeros((128, 4611686018427387904), dtype=nl.float32)
  big = nl.ndarray((nl.par_dim(128), 100000), dtype=nl.float32, buffer=nl.sbuf)
  u = nl.load(x[0:128, 0:512])
  for i in nl.affine_range(9000000000000000000):
    # CHECK: huge-sizes.py:[[@LINE+2]]:5: error: out of bounds: indexes dimension 1 of 'big' (size 100000) at 0..8999997000000000000 [index-bounds]
    # CHECK: huge-sizes.py:[[@LINE+1]]:5: error: different iterations of affine_range loop L0
    big[0:128, 0:9000000000000000000:3000000000000] = nl.copy(u)
  for k1 in nl.affine_range(4000000000000000):
    for k2 in nl.affine_range(3000000000000000):
      # A stride times a trip count past 64 bits: the dependence test cannot decide, so it may overlap.
      # CHECK: huge-sizes.py:[[@LINE+1]]:7: error: different iterations of affine_range loop
      big[0:128, k2 * 8000000000000 + k1 * 7000000000000] = nl.copy(u[0:128, 0:1])
  for k3 in nl.affine_range(4):
    # A coefficient past 64 bits makes the index unknown (no check), not a wrapped small one.
    big[0:128, k3 * 3000000000 * 5000000000 * 7000000000] = nl.copy(u[0:128, 0:1])
  return huge
# CHECK-NOT: error
# CHECK: 1 kernel, 3 errors, 1 warning
