# Runtime (on-device) loops and dynamic addressing, in the current `nki`
# dialect (nl.fori_loop / nl.while_loop from NKI 0.6.0, .ap(scalar_offset=)).
#
# Inputs (HBM, float32):
#   x     [T, P, N] = [4, 128, 256]    T row tiles of [128, 256]
# Outputs:
#   y_exp [T, P, N]   y_exp = exp(x)          (tiles visited 0..T-1 by fori_loop)
#   y_aff [T, P, N]   y_aff = 2 * x + 1       (tiles visited T-1..0 by while_loop)
#
# The tile index is a runtime value, never a Python int: in the fori_loop body
# it is the loop register `i`; in the while_loop body it lives in a [1, 1] int32
# SBUF tensor `cnt` that the body decrements and reloads into the condition
# register. Both feed .ap(pattern=[[N, P], [1, N]], scalar_offset=...,
# indirect_dim=0), which starts the access at element scalar_offset * P * N of
# the 3-D HBM tensor, i.e. at tile scalar_offset.
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(x):
  T, P, N = x.shape
  assert P <= nl.tile_size.pmax

  y_exp = nl.ndarray((T, P, N), dtype=x.dtype, buffer=nl.shared_hbm)
  y_aff = nl.ndarray((T, P, N), dtype=x.dtype, buffer=nl.shared_hbm)

  # ---- counted runtime loop: i = 0, 1, ..., T-1 ----
  def exp_body(i):
    t_sb = nl.ndarray((P, N), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t_sb, src=x.ap(pattern=[[N, P], [1, N]], offset=0,
                                     scalar_offset=i, indirect_dim=0))
    e_sb = nl.ndarray((P, N), dtype=x.dtype, buffer=nl.sbuf)
    nisa.activation(dst=e_sb, op=nl.exp, data=t_sb)
    nisa.dma_copy(dst=y_exp.ap(pattern=[[N, P], [1, N]], offset=0,
                               scalar_offset=i, indirect_dim=0), src=e_sb)

  nl.fori_loop(0, T, exp_body)

  # ---- condition-driven runtime loop: counts T down to 0 ----
  cnt = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
  nisa.memset(dst=cnt, value=T)
  cond = nisa.register_alloc(T)

  def aff_body(r):
    # cnt <- cnt - 1 ; this iteration handles tile cnt
    nisa.tensor_scalar(dst=cnt, data=cnt, op0=nl.subtract, operand0=1.0)
    t_sb = nl.ndarray((P, N), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t_sb, src=x.ap(pattern=[[N, P], [1, N]], offset=0,
                                     scalar_offset=cnt, indirect_dim=0))
    a_sb = nl.ndarray((P, N), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=a_sb, data=t_sb, op0=nl.multiply, operand0=2.0,
                       op1=nl.add, operand1=1.0)
    nisa.dma_copy(dst=y_aff.ap(pattern=[[N, P], [1, N]], offset=0,
                               scalar_offset=cnt, indirect_dim=0), src=a_sb)
    nxt = nisa.register_alloc()
    nisa.register_load(nxt, cnt)
    return nxt

  nl.while_loop(cond, aff_body)

  return y_exp, y_aff
