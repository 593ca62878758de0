# The nki dialect: causal attention scores as causal_scores.py, with the destination-passing
# nisa.affine_select(dst, pattern, offset, channel_multiplier, on_true_tile, on_false_value, cmp_op):
# dst[p, f] = on_true_tile[p, f] where cmp_op(offset + p * channel_multiplier + f * step, 0), else the value.
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def causal_scores(q, k):
  out = nl.ndarray((256, 256), dtype=nl.float32, buffer=nl.shared_hbm)
  q_t = nl.ndarray((64, 256), dtype=nl.float32, buffer=nl.sbuf)
  k_t = nl.ndarray((64, 256), dtype=nl.float32, buffer=nl.sbuf)
  nisa.dma_copy(dst=q_t, src=q)
  nisa.dma_copy(dst=k_t, src=k)
  for i in nl.affine_range(2):
    for j in nl.affine_range(2):
      s = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
      nisa.nc_matmul(dst=s, stationary=q_t[0:64, i * 128:i * 128 + 128], moving=k_t[0:64, j * 128:j * 128 + 128])
      m = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
      nisa.affine_select(m, pattern=[[-1, 128]], offset=i * 128 - j * 128, channel_multiplier=1, on_true_tile=s,
                         on_false_value=-9984.0, cmp_op=nl.greater_equal)
      nisa.dma_copy(dst=out[i * 128:i * 128 + 128, j * 128:j * 128 + 128], src=m)
  return out
