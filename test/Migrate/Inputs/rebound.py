# NKI 0.1: index names bound again for each statement (`ip`, `jf`), an nl.arange(lo, hi), a flattened
# write whose tile has partial rows (200 rows: 128 + 72) and a per-iteration tile whose width depends
# on the loop (widths 4 and 8): its access pattern strides by the width as allocated.
import math
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def pair_swap(x):
  rows, cols = x.shape
  out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(math.ceil(rows / 128)):
    ip = i * 128 + nl.arange(128)[:, None]
    jf = nl.arange(0, cols)[None, :]
    t = nl.load(x[ip, jf], mask=(ip < rows))
    s = nl.ndarray((128, cols), dtype=x.dtype, buffer=nl.sbuf)
    ip = nl.arange(128)[:, None, None]
    jf = nl.arange(cols // 2)[None, :, None]
    kf = nl.arange(2)[None, None, :]
    s[ip, 2 * jf + kf] = nl.copy(t[ip, 2 * jf - kf + 1], mask=(i * 128 + ip < rows))
    ip = i * 128 + nl.arange(128)[:, None]
    jf = nl.arange(cols)[None, :]
    nl.store(out[ip, jf], value=s, mask=(ip < rows))
  return out
