# Two NKI 0.1 kernels with the same parameters; the second asserts a shape the first one's inputs
# do not have.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def copy_any(a):
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  nl.store(out, value=nl.load(a))
  return out


@nki.jit
def copy_wide(a):
  assert a.shape[1] % 256 == 0
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  nl.store(out, value=nl.load(a))
  return out
