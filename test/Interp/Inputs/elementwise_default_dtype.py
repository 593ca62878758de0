# nl.* elementwise ops without dtype=: a unary op's result takes its input tile's dtype, a binary op's the
# promoted dtype of its tile operands (a scalar operand does not widen it). With x bf16 and u fp32:
# exp(0.1) = 1.10517 rounds to bf16 1.1015625; x * 1.001 stays bf16 (1.0); x + u promotes to fp32 (1.001).
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def defaults(x, u):
  out = nl.ndarray((128, 40), dtype=nl.float32, buffer=nl.shared_hbm)
  t = nl.load(x)
  v = nl.load(u)
  e = nl.exp(nl.multiply(t, 0.1, dtype=nl.float32))
  e16 = nl.exp(nl.multiply(t, 0.1))
  m = nl.multiply(t, 1.001)
  s = nl.add(t, v)
  r = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
  a = nisa.activation_reduce(op=nl.copy, data=t, scale=1.001, reduce_op=nl.add, reduce_res=r)
  nl.store(out[:, 0:8], value=e[:, 0:8])
  nl.store(out[:, 8:16], value=e16[:, 0:8])
  nl.store(out[:, 16:24], value=m[:, 0:8])
  nl.store(out[:, 24:32], value=s[:, 0:8])
  nl.store(out[:, 32:40], value=a[:, 0:8])
  return out
