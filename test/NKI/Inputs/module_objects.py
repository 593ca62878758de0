from dataclasses import dataclass

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE = 128


class Cfg:
  tile = TILE
  cols = TILE * 4


@dataclass(frozen=True)
class Tiling:
  rows: int = 64
  scale: float = 2.0
  name: str = "t"


CFG = Cfg()
TILING = Tiling(rows=CFG.tile)


@nki.jit
def kernel(a, cfg=TILING):
  # a: f32[256, 512]; out = a * 2 + 3, sizes taken from module-level objects and a class built in the kernel
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  extra = Tiling(128, 3.0)
  for i in nl.affine_range(a.shape[0] // cfg.rows):
    for j in nl.affine_range(CFG.cols // Cfg.tile):
      t = nl.load(a[i * cfg.rows:(i + 1) * cfg.rows, j * Cfg.tile:(j + 1) * CFG.tile])
      nl.store(out[i * extra.rows:(i + 1) * extra.rows, j * Cfg.tile:(j + 1) * CFG.tile],
               value=nl.add(nl.multiply(t, cfg.scale), extra.scale))
  return out
