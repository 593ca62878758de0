# nki dialect: tiles filled whole by nisa.dma_copy in the loop body; w's tile does not depend on b.
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def blockwise_product(x, w):
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  acc = nl.ndarray((128, 256), dtype=x.dtype, buffer=nl.sbuf)
  for b in nl.affine_range(2):
    for k in nl.affine_range(2):
      for j in nl.affine_range(2):
        wt = nl.ndarray((128, 256), dtype=w.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=wt, src=w[k * 128:(k + 1) * 128, j * 256:(j + 1) * 256])
        xt = nl.ndarray((128, 256), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=xt, src=x[b, k * 128:(k + 1) * 128, j * 256:(j + 1) * 256])
        yt = nl.ndarray((128, 256), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=yt, data1=xt, data2=wt, op=nl.multiply)
        nisa.dma_copy(dst=out[b, k * 128:(k + 1) * 128, j * 256:(j + 1) * 256], src=yt)
  for i in nl.sequential_range(2):
    nisa.dma_copy(dst=acc, src=w[0:128, 0:256])
    nisa.dma_copy(dst=out[i, 0:128, 0:256], src=acc)
  return out
