# RUN: not %accelopt check --no-source %s --inputs 'a=f32[128,512]' | %FileCheck %s
# An nki (0.2+) kernel: APIs and keywords the dialect removed are errors naming their replacement.
import nki
import nki.language as nl
import nki.isa as nisa
# A utility imported from neuronxcc.nki is no error by itself; a 0.1-only one used in the kernel is.
# CHECK-NOT: cannot be imported
import neuronxcc.nki.typing as nt
from neuronxcc.nki.language import par_dim


@nki.jit
def kernel(a):
  out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
  # CHECK: dialect-removed.py:[[@LINE+1]]:9: error: nl.arange was removed in the nki dialect; index with slices (t[a:b]) or an access pattern (t.ap(pattern=...)) [dialect-removed]
  i_p = nl.arange(128)[:, None]
  # CHECK: dialect-removed.py:[[@LINE+1]]:19: error: nl.par_dim was removed in the nki dialect; block dimensions are gone: use a Python list of tiles or fold them into free dims [dialect-removed]
  u = nl.ndarray((par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
  nisa.dma_copy(dst=t, src=a[0:128, 0:512])
  r = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
  # CHECK: dialect-removed.py:[[@LINE+1]]:63: error: 'mask=' was removed in the nki dialect; bound the slices (min(...)) instead of masking [dialect-removed]
  nisa.tensor_scalar(dst=r, data=t, op0=nl.add, operand0=1.0, mask=None)
  nisa.dma_copy(dst=out[0:128, 0:512], src=r)
  return out
