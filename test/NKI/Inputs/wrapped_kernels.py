# Kernels made by a call instead of a decorator, and a helper kernel named by --kernel.
from neuronxcc import nki
import neuronxcc.nki.language as nl


def double(a):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  nl.store(out, value=nl.multiply(nl.load(a), 2.0))
  return out


def negate(a):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  nl.store(out, value=nl.negative(nl.load(a)))
  return out


def add_one_into(a, z):
  nl.store(z, value=nl.add(nl.load(a), 1.0))


run_double = nki.baremetal()(double)

if __name__ == "__main__":
  import numpy as np
  x = np.ones((128, 64), dtype=np.float32)
  print(nki.simulate_kernel(nki.jit(negate), x))
