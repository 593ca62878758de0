# A name bound nowhere in the file and not a Python builtin is reported by `check` (CPython raises
# NameError when the kernel is traced), at every read; names bound anywhere in the file, in any
# scope or statement kind, are not.
# RUN: not %accelopt check --no-source %s --inputs 'x=f32[128,512]' | %FileCheck %s
# RUN: not %accelopt run %s --inputs 'x=f32[128,512]' 2>&1 | %FileCheck %s --check-prefix=EXEC
# RUN: sed -e 's/^from math import ceil as ceiling$/from math import */' %s > %t.star.py
# RUN: %accelopt check --no-source %t.star.py --inputs 'x=f32[128,512]' | %FileCheck %s --check-prefix=STAR
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from math import ceil as ceiling

SCALES = [s for s in (1.0, 2.0)]


class Config:
  bias = 0.5


def helper(tile, *rest, factor=2, **kw):
  global COUNTER
  with open("/dev/null") as handle:
    pass
  try:
    pass
  except ValueError as err:
    pass
  if (n := len(rest)) > 0:
    pass
  return tile


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  cfg = Config()
  t = nl.load(x[0:128, 0:512])
  # CHECK: undefined-name.py:[[@LINE+1]]:22: error: name 'missing_scale' is not defined [undefined-name]
  u = nl.multiply(t, missing_scale)
  # CHECK: undefined-name.py:[[@LINE+1]]:22: error: name 'missing_scale' is not defined [undefined-name]
  v = nl.multiply(u, missing_scale + len(SCALES) + ceiling(1.5))
  # CHECK-NOT: is not defined
  nl.store(out[0:128, 0:512], value=v)
  return out
# CHECK: 1 kernel, 2 errors, 0 warnings
# EXEC: error: name 'missing_scale' is not defined
# A star import may bind any name: nothing is reported.
# STAR: 1 kernel, 0 errors
