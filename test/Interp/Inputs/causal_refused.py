# NKI 0.1: affine_select predicates the GpSimd engine cannot evaluate.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def band(x):
  out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
  ip = nl.arange(128)[:, None]
  jf = nl.arange(128)[None, :]
  t = nl.load(x)
  m = nisa.affine_select(pred=(ip >= jf) & (ip < jf + 4), on_true_tile=t, on_false_value=0.0)
  nl.store(out[ip, jf], value=m)
  return out
