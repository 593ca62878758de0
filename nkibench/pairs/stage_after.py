# Direction pair "stage" (after): stage_before.py rewritten by the op(s) below
# (nkibench/manifest.json, expect.ops of stage_after).
#
# AFTER (stage S4 out of L0): the 4 x tiles are loaded once into an SBUF buffer
# (2 KiB per partition) before the column block loop: x read once (256 KiB).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(xT, w):
  K, M = xT.shape
  _, N = w.shape
  out = nl.ndarray((M, N), dtype=xT.dtype, buffer=nl.shared_hbm)
  x_tile_stage = nl.ndarray((4, nl.par_dim(128), 128), dtype=nl.float32, buffer=nl.sbuf)
  for k in nl.affine_range(K // 128):
    x_tile_stage[k, 0:128, 0:128] = nl.load(xT[k * 128:(k + 1) * 128, 0:M])
  for n in nl.affine_range(N // 128):
    acc = nl.zeros((128, 128), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(K // 128):
      w_tile = nl.load(w[k * 128:(k + 1) * 128, n * 128:(n + 1) * 128])
      acc += nisa.nc_matmul(x_tile_stage[k, 0:128, 0:128], w_tile)
    nl.store(out[0:M, n * 128:(n + 1) * 128], value=nl.copy(acc, dtype=out.dtype))
  return out
