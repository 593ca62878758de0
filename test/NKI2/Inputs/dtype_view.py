# The current dialect: an HBM tensor's fp32 bytes read as bf16 pairs (a.view(nl.bfloat16) is [128, 128];
# little-endian, so element 2k is the low half of a[:, k]), widened to fp32 on the way out.
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def halves(a):
  out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
  h = a.view(nl.bfloat16)
  h_sb = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
  nisa.dma_copy(dst=h_sb, src=h[0:128, 0:128])
  f_sb = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
  nisa.tensor_copy(dst=f_sb, src=h_sb)
  nisa.dma_copy(dst=out[0:128, 0:128], src=f_sb)
  return out
