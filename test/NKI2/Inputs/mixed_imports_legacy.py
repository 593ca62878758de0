# A 0.1 kernel whose file also imports the current package for one name: the kernel's calls name
# neuronxcc.nki, so it is read (and run) as a 0.1 kernel.
import nki
import neuronxcc.nki as nki01
import neuronxcc.nki.language as nl


@nki01.jit
def kernel(a, b):
  out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
  x = nl.load(a[0:128, 0:512])
  y = nl.load(b[0:128, 0:512])
  nl.store(out[0:128, 0:512], value=nl.add(x, y))
  return out
