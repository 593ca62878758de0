import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def views(q, k):
  # q: f32[2, 256, 128], k: f32[2, 3, 256, 128]; out[b] = 3 q[b] + sum_h k[b, h]. Tiles are loaded
  # through integer-indexed views of HBM tensors (q[b], k[b, h]), with advanced and basic indices:
  # a subscript of a view indexes the dimensions the view leaves whole.
  out = nl.ndarray(q.shape, dtype=q.dtype, buffer=nl.shared_hbm)
  i_p, i_f = nl.mgrid[0:128, 0:128]
  for b in nl.affine_range(q.shape[0]):
    q_b = q[b]
    for t in nl.affine_range(q.shape[1] // 128):
      acc = nl.ndarray((nl.par_dim(128), 128), dtype=nl.float32, buffer=nl.sbuf)
      acc[...] = nl.multiply(nl.load(q_b[t * 128 + i_p, i_f]), 3.0)
      for h in nl.affine_range(k.shape[1]):
        k_bh = k[b, h]
        acc += nl.load(k_bh[t * 128:(t + 1) * 128, :])
      nl.store(out[b, t * 128 + i_p, i_f], value=acc)
  return out
