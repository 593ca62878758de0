# A sequential loop whose iteration i reads what iteration i - 1 wrote.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=np.float32, buffer=nl.shared_hbm)
  buf = nl.ndarray((4, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.sbuf)
  buf[0, nl.arange(128)[:, None], nl.arange(512)[None, :]] = nl.load(x[nl.arange(128)[:, None], nl.arange(512)[None, :]])

  for i in nl.sequential_range(3):
    # chain: buf[i + 1] = exp(buf[i])
    buf[i + 1, nl.arange(128)[:, None], nl.arange(512)[None, :]] = nl.exp(
        buf[i, nl.arange(128)[:, None], nl.arange(512)[None, :]])

  nl.store(out[nl.arange(128)[:, None], nl.arange(512)[None, :]],
           value=buf[3, nl.arange(128)[:, None], nl.arange(512)[None, :]])
  return out
