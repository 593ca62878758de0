import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def wide(lhs, rhs):
  out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
  lhs_sb = nl.load(lhs)
  rhs_sb = nl.load(rhs)
  acc = nisa.nc_matmul(lhs_sb, rhs_sb, perf_mode='double_row_gen3')
  nl.store(out, value=nl.copy(acc))
  return out
