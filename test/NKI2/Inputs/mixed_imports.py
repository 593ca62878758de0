# A current-dialect kernel whose file also imports utilities from neuronxcc.nki (a code generator's
# preamble): the kernel's own uses make it an nki kernel; the unused legacy names are harmless.
import nki
import nki.isa as nisa
import nki.language as nl
from neuronxcc.nki import trace
from neuronxcc.nki.language import par_dim


@nki.jit
def kernel(a, b):
  M, N = a.shape
  P = nl.tile_size.pmax
  out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)
  for m in nl.affine_range(M // P):
    a_sb = nl.ndarray((P, N), dtype=a.dtype, buffer=nl.sbuf)
    b_sb = nl.ndarray((P, N), dtype=b.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a_sb, src=a[m * P:(m + 1) * P, 0:N])
    nisa.dma_copy(dst=b_sb, src=b[m * P:(m + 1) * P, 0:N])
    c_sb = nl.ndarray((P, N), dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=c_sb, data1=a_sb, data2=b_sb, op=nl.add)
    nisa.dma_copy(dst=out[m * P:(m + 1) * P, 0:N], src=c_sb)
  return out
