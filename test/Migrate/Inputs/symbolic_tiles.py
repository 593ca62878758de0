# NKI 0.1 ISA calls whose result tiles the migration allocates: the shapes come from the kernel's sizes.
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def symbolic_tiles(a, b):
  rows, cols = a.shape
  k, n = b.shape
  out = nl.ndarray((cols, rows), dtype=a.dtype, buffer=nl.shared_hbm)
  scaled = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
  prod = nl.ndarray((cols, n), dtype=a.dtype, buffer=nl.shared_hbm)
  x = nl.load(a[0:rows, 0:cols])
  # nested: the transpose's tile is (cols, rows)
  y = nl.exp(nisa.nc_transpose(x))
  nl.store(out[0:cols, 0:rows], value=y)
  # assigned: the tile is (rows, cols), as the load spells it
  z = nisa.tensor_scalar(data=x, op0=nl.multiply, operand0=2.0)
  nl.store(scaled, value=z)
  # a whole kernel argument: its extents as `k, n = b.shape` names them
  w = nl.load(b)
  m = nl.exp(nisa.nc_matmul(x, w))
  nl.store(prod, value=m)
  # operand dimensions of one traced size spelled two ways (rows, k): the traced number there
  v = nl.exp(nisa.tensor_tensor(x[0:rows, 0:cols], x[0:k, 0:cols], op=nl.add))
  nl.store(scaled, value=v)
  return out, scaled, prod
