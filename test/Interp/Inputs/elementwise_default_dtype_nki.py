# The same defaults in the nki (0.2+) dialect: exp of a bf16 tile is bf16, a bf16 tile plus an fp32 tile is fp32.
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def defaults(x, u):
  out = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.shared_hbm)
  t = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
  nisa.dma_copy(dst=t, src=x)
  v = nl.ndarray((128, 64), dtype=u.dtype, buffer=nl.sbuf)
  nisa.dma_copy(dst=v, src=u)
  e16 = nl.exp(nl.multiply(t, 0.1))
  s = nl.add(t, v)
  o = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.sbuf)
  nisa.tensor_copy(dst=o[:, 0:8], src=e16[:, 0:8])
  nisa.tensor_copy(dst=o[:, 8:16], src=s[:, 0:8])
  nisa.dma_copy(dst=out[:, 0:16], src=o[:, 0:16])
  return out
