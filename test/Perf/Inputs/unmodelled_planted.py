import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(x, rows):
  # x: f32[256, 512], rows: i32[128, 1]. Three pieces of work the model cannot trace, planted on purpose.
  out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  stats = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
  i_f = nl.arange(512)[None, :]
  # 1. A slice whose end is known only when the kernel runs: the model cannot size it. (A gather through
  # the row numbers, x[row, i_f], is sized: one row per index, indirect-dma.test.)
  row = nl.load(rows)
  t = nl.load(x[0:row, 0:512])
  # 2. A call the model does not know.
  s = nisa.max8(src=t)
  # 3. A store of that unknown value.
  nl.store(stats, value=s)
  nl.store(out, value=nl.add(t, t))
  return out
