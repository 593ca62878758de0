# NKI 0.1: causal attention scores. scores[i, j] = q[:, i] . k[:, j] for key j <= query i, else -9984
# (a causal mask with nisa.affine_select on the PSUM tile of each 128 x 128 block).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def causal_scores(q, k):
  out = nl.ndarray((256, 256), dtype=nl.float32, buffer=nl.shared_hbm)
  ip = nl.arange(128)[:, None]
  jf = nl.arange(128)[None, :]
  kd = nl.arange(64)[:, None]
  q_t = nl.load(q)
  k_t = nl.load(k)
  for i in nl.affine_range(2):
    for j in nl.affine_range(2):
      s = nisa.nc_matmul(q_t[kd, i * 128 + jf], k_t[kd, j * 128 + jf])
      m = nisa.affine_select(pred=(i * 128 + ip >= j * 128 + jf), on_true_tile=s, on_false_value=-9984.0,
                             dtype=nl.float32)
      nl.store(out[i * 128 + ip, j * 128 + jf], value=m)
  return out
