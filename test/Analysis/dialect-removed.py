# RUN: not %accelopt check --no-source %s --inputs 'a=f32[128,512]' | %FileCheck %s
# An nki (0.2+) kernel: APIs and keywords the dialect removed are errors naming their replacement.
import nki
import nki.language as nl
import nki.isa as nisa
# CHECK: dialect-removed.py:[[@LINE+1]]:1: error: neuronxcc.nki cannot be imported into an nki kernel (a compile error from NKI 0.4); import nki, nki.language and nki.isa instead [dialect-removed]
import neuronxcc.nki.typing as nt


@nki.jit
def kernel(a):
  out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
  # CHECK: dialect-removed.py:[[@LINE+1]]:9: error: nl.arange was removed in the nki dialect; index with slices (t[a:b]) or an access pattern (t.ap(pattern=...)) [dialect-removed]
  i_p = nl.arange(128)[:, None]
  nisa.dma_copy(dst=t, src=a[0:128, 0:512])
  r = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
  # CHECK: dialect-removed.py:[[@LINE+1]]:63: error: 'mask=' was removed in the nki dialect; bound the slices (min(...)) instead of masking [dialect-removed]
  nisa.tensor_scalar(dst=r, data=t, op0=nl.add, operand0=1.0, mask=None)
  nisa.dma_copy(dst=out[0:128, 0:512], src=r)
  return out
