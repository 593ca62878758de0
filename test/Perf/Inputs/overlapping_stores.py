# Kernels for store-order.test: two stores into the same output elements, and into disjoint halves.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def same_elements(x, y):
  P, F = x.shape
  out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
  a = nl.load(x[0:P, 0:F])
  b = nl.load(y[0:P, 0:F])
  nl.store(out[0:P, 0:F], value=a)
  nl.store(out[0:P, 0:F], value=b)
  return out


@nki.jit
def disjoint_halves(x, y):
  P, F = x.shape
  out = nl.ndarray((P, 2 * F), dtype=x.dtype, buffer=nl.shared_hbm)
  a = nl.load(x[0:P, 0:F])
  b = nl.load(y[0:P, 0:F])
  nl.store(out[0:P, 0:F], value=a)
  nl.store(out[0:P, F:2 * F], value=b)
  return out


@nki.jit
def interleaved_rows(x, y):
  # out[:, 0, :] and out[:, 1, :] interleave row by row: each store covers whole rows of its
  # middle index, runs of F elements every 2 * F, so the two are disjoint.
  P, F = x.shape
  out = nl.ndarray((P, 2, F), dtype=x.dtype, buffer=nl.shared_hbm)
  a = nl.load(x[0:P, 0:F])
  b = nl.load(y[0:P, 0:F])
  nl.store(out[0:P, 0, 0:F], value=a)
  nl.store(out[0:P, 1, 0:F], value=b)
  return out
