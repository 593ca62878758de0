# A Python list of SBUF tiles (the nki dialect's replacement for a block dimension) filled in a range()
# loop and indexed by an affine_range variable: each iteration works on its own tile.
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def column_blocks(a, b):
  out = nl.ndarray((128, 1024), dtype=a.dtype, buffer=nl.shared_hbm)
  sums = []
  for i in range(2):
    acc = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
    nisa.memset(dst=acc, value=0.0)
    sums.append(acc)
  for j in nl.affine_range(2):
    x = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
    y = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a[:, j * 512:(j + 1) * 512])
    nisa.dma_copy(dst=y, src=b[:, j * 512:(j + 1) * 512])
    nisa.tensor_tensor(dst=sums[j], data1=sums[j], data2=x, op=nl.add)
    nisa.tensor_tensor(dst=sums[j], data1=sums[j], data2=y, op=nl.multiply)
    nisa.dma_copy(dst=out[:, j * 512:(j + 1) * 512], src=sums[j])
  return out
