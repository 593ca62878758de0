import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import numpy as np
import os


@nki.jit
def kernel(x):
  """A docstring is not host code."""
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  f"{__import__('os').system('touch %HOSTFILE%')}"
  t = nl.load(x)
  n = sum([len(x.shape), abs(-1)])
  open('/etc/passwd')
  os.system('true')
  np.load('/tmp/x.npy')
  print(n)
  nl.store(out, value=t)
  return out
