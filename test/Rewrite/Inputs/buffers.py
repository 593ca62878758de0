# Inputs of shrink_buffer / expand_buffer tests (x: f32[128, 512]).
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  buf = nl.ndarray((4, nl.par_dim(128), 128), dtype=nl.float32, buffer=nl.sbuf)
  tmp = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
  acc = nl.zeros((nl.par_dim(128), 128), dtype=nl.float32, buffer=nl.sbuf)
  for i in nl.sequential_range(4):
    buf[i, 0:128, 0:128] = nl.load(x[0:128, i * 128:(i + 1) * 128])
    t = nl.add(buf[i, 0:128, 0:128], buf[0, 0:128, 0:128])
    nl.store(out[0:128, i * 128:(i + 1) * 128], value=t)
  for j in nl.sequential_range(4):
    tmp[0:128, 0:128] = nl.load(x[0:128, j * 128:(j + 1) * 128])
    e = nl.exp(tmp[0:128, 0:128])
    acc[0:128, 0:128] += e
    s = nl.copy(acc[0:128, 0:128])
    nl.store(out[0:128, j * 128:(j + 1) * 128], value=s)
  return out
