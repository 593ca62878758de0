# Flattened-offset masks, and a direct allocation, the migration leaves to the user.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.compiler as ncc


@nki.jit
def gapped_rows(x, n):
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  ip, jf = nl.mgrid[0:128, 0:256]
  for t in nl.affine_range(x.shape[0]):
    v = nl.load(x[t, ip, jf], mask=t * 32768 + 300 * ip + jf < n)
    nl.store(out[t, ip, jf], value=v, mask=t * 32768 + 300 * ip + jf < n)
  return out


@nki.jit
def unmasked_reader(x, n):
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  ip, jf = nl.mgrid[0:128, 0:256]
  for t in nl.affine_range(x.shape[0]):
    v = nl.load(x[t, ip, jf], mask=t * 32768 + 256 * ip + jf < n)
    u = nl.exp(v)
    nl.store(out[t, ip, jf], value=u, mask=t * 32768 + 256 * ip + jf < n)
  return out


@nki.jit
def placed(x, n):
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  buf = nl.ndarray((128, 256), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
  buf[...] = nl.load(x[0])
  nl.store(out[0], value=buf)
  return out
