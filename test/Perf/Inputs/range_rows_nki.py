# A Python `range` loop in the nki dialect (0.2+): the compiler unrolls it while specializing the kernel.
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(a):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  for i in range(a.shape[0] // 128):
    t = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
    r = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    nisa.activation(dst=r, op=nl.exp, data=t)
    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=r)
  return out
