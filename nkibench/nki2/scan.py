# Linear recurrence along the free axis, h[:, t] = a[:, t] * h[:, t-1] + b[:, t]
# with h[:, -1] = 0, in the current `nki` dialect.
#
# Inputs (HBM, float32):
#   a    [P, T] = [128, 2048]
#   b    [P, T] = [128, 2048]
# Output:
#   h    [P, T]
#
# The sequence is processed in chunks of 512 columns in an nl.sequential_range
# (real loop-carried dependency). nisa.tensor_tensor_scan(dst, data0, data1,
# initial, op0=multiply, op1=add) computes r[:, i] = (data0[:, i] * r[:, i-1]) +
# data1[:, i]; the first chunk starts from the scalar initial 0.0, every later
# chunk from a [128, 1] SBUF tile holding the last column of the previous chunk
# (copied with tensor_copy).
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(a, b):
  P, T = a.shape
  C = 512
  assert P <= nl.tile_size.pmax and T % C == 0

  h = nl.ndarray((P, T), dtype=nl.float32, buffer=nl.shared_hbm)

  carry = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)

  for c in nl.sequential_range(T // C):
    c0 = c * C
    a_sb = nl.ndarray((P, C), dtype=a.dtype, buffer=nl.sbuf)
    b_sb = nl.ndarray((P, C), dtype=b.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a_sb, src=a[0:P, c0:c0 + C])
    nisa.dma_copy(dst=b_sb, src=b[0:P, c0:c0 + C])

    h_sb = nl.ndarray((P, C), dtype=nl.float32, buffer=nl.sbuf)
    if c == 0:
      nisa.tensor_tensor_scan(dst=h_sb, data0=a_sb, data1=b_sb, initial=0.0,
                              op0=nl.multiply, op1=nl.add)
    else:
      nisa.tensor_tensor_scan(dst=h_sb, data0=a_sb, data1=b_sb, initial=carry,
                              op0=nl.multiply, op1=nl.add)

    nisa.tensor_copy(dst=carry, src=h_sb[0:P, C - 1:C])
    nisa.dma_copy(dst=h[0:P, c0:c0 + C], src=h_sb)

  return h
