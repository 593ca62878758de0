# Two-file kernels: helpers come from tilemath.py (from-import and module alias) and from the
# package helpers/ (a tile helper whose module imports a constant relatively).
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from tilemath import ceil_div, n_elts, last_axis
import tilemath as tm
from helpers.tiles import add_bias


@nki.jit
def rows_double(x):
  axis = last_axis(-1, len(x.shape))
  rows = n_elts(x.shape[:axis])
  cols = x.shape[axis]
  out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(ceil_div(rows, tm.TILE)):
    t = nl.load(x[i * tm.TILE:(i + 1) * tm.TILE, 0:cols])
    nl.store(out[i * tm.TILE:(i + 1) * tm.TILE, 0:cols], value=nl.multiply(t, 2.0))
  return out


@nki.jit
def rows_bias(x):
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(ceil_div(x.shape[0], tm.TILE)):
    t = nl.load(x[i * tm.TILE:(i + 1) * tm.TILE, :])
    nl.store(out[i * tm.TILE:(i + 1) * tm.TILE, :], value=add_bias(t))
  return out


@nki.jit
def rows_bad(x):
  out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(tm.bad_split(x.shape[0])):
    nl.store(out[i * 128:(i + 1) * 128, :], value=nl.load(x[i * 128:(i + 1) * 128, :]))
  return out
