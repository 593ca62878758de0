# Inputs of indirect-dma.test: a row gather through an index tile (indirect DMA). Each row tile loads 128
# row numbers, then the rows they name, then stores them in order.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(table, idx):
  R, _ = idx.shape
  _, D = table.shape
  out = nl.ndarray((R, D), dtype=table.dtype, buffer=nl.shared_hbm)
  i_p = nl.arange(128)[:, None]
  i_f = nl.arange(D)[None, :]
  for t in nl.affine_range(R // 128):
    idx_tile = nl.load(idx[t * 128:(t + 1) * 128, 0:1])
    rows = nl.load(table[idx_tile[i_p, 0], i_f])
    nl.store(out[t * 128 + i_p, i_f], value=rows)
  return out
