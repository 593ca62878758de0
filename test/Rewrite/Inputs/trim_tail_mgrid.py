# Masked row tiles indexed through nl.mgrid names: unpacked (i_p, i_f) and attributes (ix.p, ix.x).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def masked_rows(a, b):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  i_p, i_f = nl.mgrid[0:128, 0:256]
  ix = nl.mgrid[0:128, 0:256]
  for i in nl.affine_range(3):
    t = nl.ndarray((128, 256), dtype=a.dtype, buffer=nl.sbuf)
    t[i_p, i_f] = nl.load(a[i * 128 + i_p, i_f], mask=(i * 128 + i_p < 300))
    u = nl.ndarray((128, 256), dtype=a.dtype, buffer=nl.sbuf)
    u[ix.p, ix.x] = nl.load(b[i * 128 + ix.p, ix.x], mask=(i * 128 + ix.p < 300))
    s = nl.add(t, u, mask=(i * 128 + i_p < 300))
    nl.store(out[i * 128 + i_p, i_f], value=s, mask=(i * 128 + i_p < 300))
  return out
