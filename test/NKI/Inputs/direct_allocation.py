import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
from neuronxcc.nki import compiler as alloc


@nki.jit
def placed_matmul(lhsT, rhs):
  # lhsT [256, 64] (K x M), rhs [256, 384]: out = lhsT.T @ rhs accumulated over two K tiles in a placed PSUM tile
  out = nl.ndarray((64, 384), dtype=nl.float32, buffer=nl.shared_hbm)
  acc = nl.zeros((64, 384), dtype=nl.float32, buffer=alloc.psum.auto_alloc())
  for k in nl.sequential_range(2):
    lhs_sb = nl.ndarray((128, 64), dtype=lhsT.dtype, buffer=alloc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(1,)))
    rhs_sb = nl.ndarray((128, 384), dtype=rhs.dtype, buffer=alloc.sbuf.mod_alloc(base_addr=1024))
    lhs_sb[...] = nl.load(lhsT[k * 128:(k + 1) * 128, :])
    rhs_sb[...] = nl.load(rhs[k * 128:(k + 1) * 128, :])
    acc += nisa.nc_matmul(lhs_sb, rhs_sb)
  nl.store(out, value=nl.copy(acc))
  return out
