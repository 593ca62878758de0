# NKI 0.1 affine_select whose dtype= rounds its result below the dtype of the tile it is stored in.
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def lower_triangle_rounded(x):
  out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
  ip = nl.arange(128)[:, None]
  jf = nl.arange(128)[None, :]
  t = nl.load(x)
  m = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
  m[ip, jf] = nisa.affine_select(pred=(ip >= jf), on_true_tile=t, on_false_value=-9984.0, dtype=nl.bfloat16)
  k = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
  k[ip, jf] = nisa.affine_select(pred=(jf > ip), on_true_tile=t, on_false_value=0.0, dtype=nl.float32)
  nl.store(out[ip, jf], value=nl.add(m, k))
  return out
