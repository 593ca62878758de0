# RUN: %accelopt check --no-source %s --inputs 'x=f32[128,65536]' | %FileCheck %s
# A warning, not an error: the compiler spills what does not fit.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 65536), dtype=nl.float32, buffer=nl.shared_hbm)
  # 128 blocks x 512 fp32 = 256 KiB per partition > 192 KiB.
  # CHECK: sbuf-capacity.py:[[@LINE+1]]:11: warning: SBUF tensors need 256 KiB per partition from here on, more than the 192 KiB available on trn1; the compiler will spill to HBM (consider shrink_buffer on block dimensions) [sbuf-capacity]
  tiles = nl.ndarray((128, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
  for i in nl.affine_range(128):
    tiles[i, 0:128, 0:512] = nl.load(x[0:128, 512 * i:512 * i + 512])
  for i in nl.affine_range(128):
    nl.store(out[0:128, 512 * i:512 * i + 512], value=tiles[i, 0:128, 0:512])
  return out
# CHECK: 1 kernel, 0 errors, 1 warning
