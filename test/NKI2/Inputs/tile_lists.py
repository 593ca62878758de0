# Block buffers written as Python lists of tiles (the current dialect's replacement for block
# dimensions), in the three ways kernels build them: `append` in range() loops (nested lists), a
# `[None] * n` list filled by index, and list comprehensions. Each kernel computes aT.T @ b with the
# result blocks accumulated in SBUF across K tiles (one PSUM tile per matmul, added with tensor_tensor).
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def by_append(aT, b):
  K, M = aT.shape
  _, N = b.shape
  MT, NT = M // 128, N // 512
  out = nl.ndarray((M, N), dtype=aT.dtype, buffer=nl.shared_hbm)
  rows = []
  for i in range(MT):
    row = []
    for j in range(NT):
      acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
      nisa.memset(dst=acc, value=0.0)
      row.append(acc)
    rows.append(row)
  for k in nl.sequential_range(K // 128):
    a_tiles = []
    for i in nl.affine_range(MT):
      at = nl.ndarray((128, 128), dtype=aT.dtype, buffer=nl.sbuf)
      nisa.dma_copy(dst=at, src=aT[k * 128:(k + 1) * 128, i * 128:(i + 1) * 128])
      a_tiles.append(at)
    for j in nl.affine_range(NT):
      bt = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
      nisa.dma_copy(dst=bt, src=b[k * 128:(k + 1) * 128, j * 512:(j + 1) * 512])
      for i in nl.affine_range(MT):
        ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=ps, stationary=a_tiles[i], moving=bt)
        nisa.tensor_tensor(dst=rows[i][j], data1=rows[i][j], data2=ps, op=nl.add)
  for i in nl.affine_range(MT):
    for j in nl.affine_range(NT):
      res = nl.ndarray((128, 512), dtype=aT.dtype, buffer=nl.sbuf)
      nisa.tensor_copy(dst=res, src=rows[i][j][0:128, 0:512])
      nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], src=res)
  return out


@nki.jit
def by_index(aT, b):
  K, M = aT.shape
  _, N = b.shape
  MT, NT = M // 128, N // 512
  out = nl.ndarray((M, N), dtype=aT.dtype, buffer=nl.shared_hbm)
  rows = []
  for i in range(MT):
    row = [None] * NT
    for j in range(NT):
      row[j] = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
      nisa.memset(dst=row[j], value=0.0)
    rows.append(row)
  for k in nl.sequential_range(K // 128):
    a_tiles = [None] * MT
    for i in nl.affine_range(MT):
      at = nl.ndarray((128, 128), dtype=aT.dtype, buffer=nl.sbuf)
      nisa.dma_copy(dst=at, src=aT[k * 128:(k + 1) * 128, i * 128:(i + 1) * 128])
      a_tiles[i] = at
    for j in nl.affine_range(NT):
      bt = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
      nisa.dma_copy(dst=bt, src=b[k * 128:(k + 1) * 128, j * 512:(j + 1) * 512])
      for i in nl.affine_range(MT):
        ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=ps, stationary=a_tiles[i], moving=bt)
        nisa.tensor_tensor(dst=rows[i][j], data1=rows[i][j], data2=ps, op=nl.add)
  for i in nl.affine_range(MT):
    for j in nl.affine_range(NT):
      res = nl.ndarray((128, 512), dtype=aT.dtype, buffer=nl.sbuf)
      nisa.tensor_copy(dst=res, src=rows[i][j])
      nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], src=res)
  return out


@nki.jit
def by_comprehension(aT, b):
  K, M = aT.shape
  _, N = b.shape
  MT, NT = M // 128, N // 512
  out = nl.ndarray((M, N), dtype=aT.dtype, buffer=nl.shared_hbm)
  rows = [[nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf) for _ in range(NT)] for _ in range(MT)]
  for i in nl.affine_range(MT):
    for j in nl.affine_range(NT):
      nisa.memset(dst=rows[i][j], value=0.0)
  for k in nl.sequential_range(K // 128):
    a_tiles = [nl.ndarray((128, 128), dtype=aT.dtype, buffer=nl.sbuf) for _ in range(MT)]
    for i in nl.affine_range(MT):
      nisa.dma_copy(dst=a_tiles[i], src=aT[k * 128:(k + 1) * 128, i * 128:(i + 1) * 128])
    for j in nl.affine_range(NT):
      bt = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
      nisa.dma_copy(dst=bt, src=b[k * 128:(k + 1) * 128, j * 512:(j + 1) * 512])
      for i in nl.affine_range(MT):
        ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=ps, stationary=a_tiles[i], moving=bt)
        nisa.tensor_tensor(dst=rows[i][j], data1=rows[i][j], data2=ps, op=nl.add)
  for i in nl.affine_range(MT):
    for j in nl.affine_range(NT):
      res = nl.ndarray((128, 512), dtype=aT.dtype, buffer=nl.sbuf)
      nisa.tensor_copy(dst=res, src=rows[i][j])
      nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], src=res)
  return out
