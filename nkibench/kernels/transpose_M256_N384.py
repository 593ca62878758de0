# Matrix transpose on the Tensor Engine: a matmul against the identity.
#
# Input (HBM, float32):
#   x    [M, N] = [256, 384]
# Output:
#   out  [N, M] = [384, 256]   out[j, i] = x[i, j]
#
# x is cut into 128 x 128 blocks. Block (i, j) is loaded with the rows of x on
# the partitions and used as the *stationary* operand of nc_matmul with the
# 128 x 128 identity as the *moving* operand:
#   nc_matmul(block, I) = block.T @ I = block.T      (PSUM, [128, 128])
# is_moving_onezero tells the engine the moving operand only holds 0/1 and
# is_transpose tags the instruction as a transpose. The PSUM result is copied
# to SBUF and stored as block (j, i) of the output.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(x):
  M, N = x.shape
  TILE = nl.tile_size.pmax     # 128
  assert M % TILE == 0 and N % TILE == 0

  out = nl.ndarray((N, M), dtype=x.dtype, buffer=nl.shared_hbm)

  # The identity lives in HBM as a kernel constant; bring it to SBUF once.
  identity_hbm = nl.shared_constant(np.identity(128, dtype=np.float32))
  identity = nl.load(identity_hbm[0:TILE, 0:TILE])

  for i in nl.affine_range(M // TILE):
    for j in nl.affine_range(N // TILE):
      block = nl.load(x[i * TILE:(i + 1) * TILE, j * TILE:(j + 1) * TILE])   # [128 (i rows), 128 (j cols)]

      block_t_psum = nisa.nc_matmul(block, identity, is_stationary_onezero=False,
                                    is_moving_onezero=True, is_transpose=True)  # [128 (j), 128 (i)]
      block_t = nl.copy(block_t_psum, dtype=x.dtype)

      nl.store(out[j * TILE:(j + 1) * TILE, i * TILE:(i + 1) * TILE], value=block_t)

  return out
