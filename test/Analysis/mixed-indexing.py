# RUN: not %accelopt check --no-source %s --inputs 'x=f32[128,512]' | %FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  i_p = nl.arange(128)[:, None]
  # CHECK: mixed-indexing.py:[[@LINE+1]]:15: error: subscript of 'x' mixes basic indexing (slices) with advanced indexing (nl.arange); use one style [mixed-indexing]
  t = nl.load(x[i_p, 0:512])
  nl.store(out[0:128, 0:512], value=t)
  return out
