# Kernels for hoist-invariant-compute.test: p = a * b does not depend on the inner loop's s.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def inner_invariant(x, y, z):
  C, P, N = x.shape
  S = z.shape[0]
  out = nl.ndarray((C, S, P, N), dtype=x.dtype, buffer=nl.shared_hbm)
  for c in nl.affine_range(C):
    a = nl.load(x[c, 0:P, 0:N])
    b = nl.load(y[c, 0:P, 0:N])
    for s in nl.affine_range(S):
      w = nl.load(z[s, 0:P, 0:N])
      p = nisa.tensor_tensor(a, b, op=nl.multiply)
      q = nisa.tensor_tensor(p, w, op=nl.add)
      nl.store(out[c, s, 0:P, 0:N], value=q)
  return out


@nki.jit
def outer_invariant(x, y, z):
  C, P, N = x.shape
  S = z.shape[0]
  out = nl.ndarray((C, S, P, N), dtype=x.dtype, buffer=nl.shared_hbm)
  for s in nl.affine_range(S):
    w = nl.load(z[s, 0:P, 0:N])
    for c in nl.affine_range(C):
      a = nl.load(x[c, 0:P, 0:N])
      b = nl.load(y[c, 0:P, 0:N])
      p = nisa.tensor_tensor(a, b, op=nl.multiply)
      q = nisa.tensor_tensor(p, w, op=nl.add)
      nl.store(out[c, s, 0:P, 0:N], value=q)
  return out


@nki.jit
def sequential_inner(x, y, z):
  C, P, N = x.shape
  S = z.shape[0]
  out = nl.ndarray((C, S, P, N), dtype=x.dtype, buffer=nl.shared_hbm)
  for c in nl.affine_range(C):
    a = nl.load(x[c, 0:P, 0:N])
    b = nl.load(y[c, 0:P, 0:N])
    for s in nl.sequential_range(S):
      w = nl.load(z[s, 0:P, 0:N])
      p = nisa.tensor_tensor(a, b, op=nl.multiply)
      q = nisa.tensor_tensor(p, w, op=nl.add)
      nl.store(out[c, s, 0:P, 0:N], value=q)
  return out
