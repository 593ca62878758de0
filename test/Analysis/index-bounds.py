# RUN: not %accelopt check --no-source %s --inputs 'x=f32[200,512]' | %FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((200, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  i_p = nl.arange(128)[:, None]
  i_f = nl.arange(512)[None, :]
  # A slice and an arange index past the 200 rows of x, unmasked: errors.
  # CHECK: index-bounds.py:[[@LINE+1]]:15: error: out of bounds: indexes dimension 0 of 'x' (size 200) at 128..255 [index-bounds]
  a = nl.load(x[128:256, :])
  # CHECK: index-bounds.py:[[@LINE+1]]:15: error: out of bounds: indexes dimension 1 of 'x' (size 512) at 256..767 [index-bounds]
  b = nl.load(x[i_p, 256 + i_f])
  # The same rows under a mask are a partial tile: legal.
  c = nl.load(x[128 + i_p, i_f], mask=(128 + i_p < 200))
  for k in nl.affine_range(2):
    # Past the end in the last iteration only (a loop-variable `if` could guard it): not reported.
    d = nl.load(x[k * 128 + i_p, i_f], mask=(k * 128 + i_p < 200))
    # Past the end in every iteration.
    # CHECK: index-bounds.py:[[@LINE+1]]:14: error: out of bounds: indexes dimension 0 of 'out' (size 200) at 200..327 [index-bounds]
    nl.store(out[200 + k * 128 + i_p, i_f], value=d, mask=None)
  nl.store(out[0:128, :], value=nl.add(a, b))
  return out
# CHECK: 1 kernel, 3 errors, 0 warnings
