# Max pooling with padding (NKI 0.1): the mask drops the window positions that fall outside the input,
# coupling each output index with its window index through the step.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def pool(x, size, pad, step):
  c, h, w = x.shape
  oh = (h + 2 * pad - size) // step + 1
  ow = (w + 2 * pad - size) // step + 1
  out = nl.ndarray((c, oh, ow), dtype=x.dtype, buffer=nl.shared_hbm)
  ic = nl.arange(c)[:, None, None, None, None]
  ir = nl.arange(oh)[None, :, None, None, None]
  jc = nl.arange(ow)[None, None, :, None, None]
  kr = nl.arange(size)[None, None, None, :, None]
  kc = nl.arange(size)[None, None, None, None, :]
  t = nl.load(x)
  m = nl.max(t[ic, step * ir - pad + kr, step * jc - pad + kc], axis=[3, 4],
             mask=(step * ir - pad + kr >= 0) & (step * ir - pad + kr < h) & (step * jc - pad + kc >= 0) &
             (step * jc - pad + kc < w))
  nl.store(out, value=m)
  return out
