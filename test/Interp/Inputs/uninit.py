# Only half of the SBUF tile is loaded, but all of it is stored.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  buf = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
  buf[0:128, 0:256] = nl.load(x[0:128, 0:256])
  y = nl.multiply(buf, 2.0)
  nl.store(out[0:128, 0:512], value=y)
  return out
