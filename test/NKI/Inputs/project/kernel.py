# A kernel whose tile code lives in other files of its project: `.utils` (a relative import, also as a
# module) and the package `mylib` next to it (whose __init__ imports a constant of its module relatively).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from .utils import load_rows, scaled
from . import utils
from mylib import store_rows


@nki.jit
def scale_rows(x):
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(x.shape[0] // 128):
    t = load_rows(x, i)
    store_rows(out, i, scaled(t, 2.0))
  return out


@nki.jit
def copy_rows(x):
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(x.shape[0] // 128):
    utils.copy_blocks(out, x, i, 32)
  return out
