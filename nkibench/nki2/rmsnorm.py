# RMSNorm with a learned weight, in the current `nki` dialect, using the
# nl.load / nl.store convenience APIs reintroduced in NKI 0.3.0.
#
# Inputs (HBM, float32):
#   x    [M, N] = [256, 512]
#   g    [N]    = [512]        per-column weight
#   eps  Python float (1e-05)
# Output:
#   out  [M, N]   out[i, :] = x[i, :] / sqrt(mean(x[i, :]^2) + eps) * g
#
# The weight row is broadcast to all 128 partitions once with a TensorE matmul:
# ones[1, 128] (stationary, K = 1) times g[1, N] (moving) gives [128, N] in PSUM,
# copied to SBUF with tensor_copy. Per row tile the sum of squares comes from
# the fused free-axis reduction of nisa.activation (reduce_op / reduce_res /
# reduce_cmd), then a two-op tensor_scalar (x 1/N, + eps), an rsqrt activation,
# a per-partition tensor_scalar multiply and a tensor_tensor multiply by g.
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(x, g, eps):
  M, N = x.shape
  P = nl.tile_size.pmax
  assert M % P == 0 and N <= nl.tile_size.psum_fmax

  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)

  # g [N] in HBM viewed as one row [1, N]; loaded to partition 0.
  g_row = nl.ndarray((1, N), dtype=nl.float32, buffer=nl.sbuf)
  nisa.dma_copy(dst=g_row, src=g.reshape((1, N)))

  ones = nl.ndarray((1, P), dtype=nl.float32, buffer=nl.sbuf)
  nisa.memset(dst=ones, value=1.0)

  # Partition broadcast: g_ps[p, j] = sum_k ones[k, p] * g_row[k, j] = g[j].
  g_ps = nl.ndarray((P, N), dtype=nl.float32, buffer=nl.psum)
  nisa.nc_matmul(dst=g_ps, stationary=ones, moving=g_row, is_stationary_onezero=True,
                 accumulate=False)
  g_bc = nl.ndarray((P, N), dtype=nl.float32, buffer=nl.sbuf)
  nisa.tensor_copy(dst=g_bc, src=g_ps)

  for m in nl.affine_range(M // P):
    r0 = m * P
    x_sb = nl.load(x[r0:r0 + P, 0:N])

    sq = nl.ndarray((P, N), dtype=nl.float32, buffer=nl.sbuf)
    sumsq = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=sq, op=nl.square, data=x_sb,
                    reduce_op=nl.add, reduce_res=sumsq,
                    reduce_cmd=nisa.reduce_cmd.reset_reduce)

    # mean(x^2) + eps, both operators in one instruction
    ms = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=ms, data=sumsq, op0=nl.multiply, operand0=1.0 / N,
                       op1=nl.add, operand1=eps)

    rinv = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=rinv, op=nl.rsqrt, data=ms)

    xn = nl.ndarray((P, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=xn, data=x_sb, op0=nl.multiply, operand0=rinv)

    y = nl.ndarray((P, N), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=y, data1=xn, data2=g_bc, op=nl.multiply)

    nl.store(out[r0:r0 + P, 0:N], value=y)

  return out
