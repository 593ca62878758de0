# RUN: not %accelopt check --no-source %s --inputs 'a=f32[128,512]' | %FileCheck %s
# nki (0.2+): every PSUM tensor starts on its own 2 KiB bank; nine live at once do not fit the eight.
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(a):
  out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
  nisa.dma_copy(dst=t, src=a[0:128, 0:512])
  p0 = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.psum)
  p1 = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.psum)
  p2 = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.psum)
  p3 = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.psum)
  p4 = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.psum)
  p5 = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.psum)
  p6 = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.psum)
  p7 = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.psum)
  # CHECK: psum-banks.py:[[@LINE+1]]:11: error: the PSUM tensors live here need 9 banks of 2 KiB per partition (each starts on its own bank); a NeuronCore has 8 [psum-banks]
  extra = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.psum)
  nisa.dma_copy(dst=out[0:128, 0:512], src=t)
  return out
