# RUN: %accelopt check --no-source %s --inputs 'a=f32[128,512]' | %FileCheck %s
# nki 0.3+: accumulate=True adds into what dst holds; on a fresh PSUM tile that is uninitialised memory.
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(a):
  out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
  nisa.dma_copy(dst=t, src=a[0:128, 0:512])
  acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
  # CHECK: accumulate.py:[[@LINE+1]]:76: warning: accumulate=True adds into 'acc', which no earlier call wrote (uninitialised PSUM); use accumulate=None or False for the first write [accumulate]
  nisa.nc_matmul(dst=acc, stationary=t[0:128, 0:128], moving=t, accumulate=True)
  # CHECK-NOT: [accumulate]
  nisa.nc_matmul(dst=acc, stationary=t[0:128, 0:128], moving=t, accumulate=True)
  res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
  nisa.tensor_copy(dst=res, src=acc)
  nisa.dma_copy(dst=out[0:128, 0:512], src=res)
  return out
