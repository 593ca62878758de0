# nisa.activation without dtype=: the result takes the input tile's dtype (bf16 here), so the fp32
# math result 1.001 is rounded to bf16 (1.0) before the store.
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def scaled_copy(x):
  out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
  t = nl.load(x)
  y = nisa.activation(op=nl.copy, data=t, scale=1.001)
  z = nisa.activation(op=nl.copy, data=t, scale=1.001, dtype=nl.float32)
  nl.store(out[:, 0:32], value=y[:, 0:32])
  nl.store(out[:, 32:64], value=z[:, 32:64])
  return out
