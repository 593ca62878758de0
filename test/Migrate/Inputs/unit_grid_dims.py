# NKI 0.1: fields of one nl.mgrid with a dimension of extent 1, indexed leaving it out
# (`t[ip, jf]` of `ip, iu, jf`) or leaving the leading dimension out (`w.reshape(...)[iu, jf]`).
import math
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def scale_rows(x, w):
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  ip, iu, jf = nl.mgrid[0:128, 0:1, 0:x.shape[1]]
  w_row = nl.load(w.reshape((1, w.shape[0]))[iu, jf])
  wb = w_row.broadcast_to((128, w.shape[0]))
  for i in nl.affine_range(math.ceil(x.shape[0] / 128)):
    t = nl.load(x[i * 128 + ip, jf], mask=(i * 128 + ip < x.shape[0]))
    u = nl.multiply(t, wb, mask=(i * 128 + ip < x.shape[0]))
    nl.store(out[i * 128 + ip, jf], value=u, mask=(i * 128 + ip < x.shape[0]))
  return out
