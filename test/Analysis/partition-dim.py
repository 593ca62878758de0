# RUN: not %accelopt check --no-source %s --inputs 'x=f32[256,512]' | %FileCheck %s
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((256, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  # CHECK: partition-dim.py:[[@LINE+1]]:9: error: partition dimension of 'big' is 256, more than the 128 partitions of sbuf (nl.tile_size.pmax) [partition-dim]
  big = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.sbuf)
  # CHECK: partition-dim.py:[[@LINE+1]]:22: error: tile of 'x' spans 256 partitions; a tile has at most 128 (nl.tile_size.pmax) [partition-dim]
  big[...] = nl.load(x[0:256, 0:512])
  nl.store(out[0:128, 0:512], value=big[0:128, 0:512])
  return out
# CHECK: 1 kernel, 2 errors, 0 warnings
