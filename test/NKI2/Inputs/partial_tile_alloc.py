# nkibench/nki2/partial_tile.py with its partial tiles allocated at their own size: each tile is
# nl.ndarray((np_, nf)), np_ = min(P, M - r0) and nf = min(F, N - c0) (the partial last tile as
# human-written nki kernels spell it), and every instruction and DMA takes whole tiles.
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(x, y):
  M, N = x.shape
  P = nl.tile_size.pmax
  F = 512
  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
  for m in range((M + P - 1) // P):
    r0 = m * P
    np_ = min(P, M - r0)
    for n in nl.static_range((N + F - 1) // F):
      c0 = n * F
      nf = min(F, N - c0)
      x_sb = nl.ndarray((np_, nf), dtype=x.dtype, buffer=nl.sbuf)
      y_sb = nl.ndarray((np_, nf), dtype=y.dtype, buffer=nl.sbuf)
      nisa.dma_copy(dst=x_sb, src=x[r0:r0 + np_, c0:c0 + nf])
      nisa.dma_copy(dst=y_sb, src=y[r0:r0 + np_, c0:c0 + nf])
      xs = nl.ndarray((np_, nf), dtype=nl.float32, buffer=nl.sbuf)
      nisa.tensor_scalar(dst=xs, data=x_sb, op0=nl.multiply, operand0=0.1)
      lr = nl.ndarray((np_, nf), dtype=nl.float32, buffer=nl.sbuf)
      nisa.tensor_tensor(dst=lr, data1=x_sb, data2=xs, op=nl.maximum)
      o_sb = nl.ndarray((np_, nf), dtype=x.dtype, buffer=nl.sbuf)
      nisa.tensor_tensor(dst=o_sb, data1=lr, data2=y_sb, op=nl.add)
      nisa.dma_copy(dst=out[r0:r0 + np_, c0:c0 + nf], src=o_sb)
  return out
