# NKI 0.1: windows of a row whose bounds depend on a static loop (columns 0:12, then 8:24), loaded
# through nl.arange(lo, hi) and pair-swapped through a flattened index: the trace does not know the
# loaded tile's width, so the access pattern strides by `t.shape[1]`.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def windows(x):
  rows, cols = x.shape
  out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
  for h in nl.static_range(2):
    lo = 8 * h
    hi = min(12 + 12 * h, cols)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(lo, hi)[None, :]
    t = nl.load(x[ip, jf])
    s = nl.ndarray((128, hi - lo), dtype=x.dtype, buffer=nl.sbuf)
    ip = nl.arange(128)[:, None, None]
    jf = nl.arange((hi - lo) // 2)[None, :, None]
    kf = nl.arange(2)[None, None, :]
    s[ip, 2 * jf + kf] = nl.copy(t[ip, 2 * jf - kf + 1])
    nl.store(out[0:128, lo:hi], value=s)
  return out
