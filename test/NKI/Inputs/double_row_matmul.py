import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit(platform_target='trn2')
def packed_matmul(lhs, rhs):
  # lhs [64, 2, 96], rhs [64, 2, 384]: FP8 double row contracts over 64 x 2 rows; out [96, 384]
  out = nl.ndarray((96, 384), dtype=nl.float32, buffer=nl.shared_hbm)
  lhs_sb = nl.load(lhs)
  rhs_sb = nl.load(rhs)
  acc = nisa.nc_matmul(lhs_sb, rhs_sb, perf_mode='double_row')
  nl.store(out, value=nl.copy(acc))
  return out
