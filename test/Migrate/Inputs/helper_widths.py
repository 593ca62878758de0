# NKI 0.1: a helper both kernels call allocates its tile at the width of its input (16 and 32) and
# writes it through a flattened index: the access pattern strides by the width as allocated.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


def swap_pairs(t, w):
  buf = nl.ndarray((128, w), dtype=t.dtype, buffer=nl.sbuf)
  ip = nl.arange(128)[:, None, None]
  jf = nl.arange(w // 2)[None, :, None]
  kf = nl.arange(2)[None, None, :]
  buf[ip, 2 * jf + kf] = nl.copy(t[ip, 2 * jf - kf + 1])
  return buf


@nki.jit
def narrow(x):
  out = nl.ndarray((128, 16), dtype=x.dtype, buffer=nl.shared_hbm)
  nl.store(out, value=swap_pairs(nl.load(x[0:128, 0:16]), 16))
  return out


@nki.jit
def wide(x):
  out = nl.ndarray((128, 32), dtype=x.dtype, buffer=nl.shared_hbm)
  nl.store(out, value=swap_pairs(nl.load(x[0:128, 0:32]), 32))
  return out
