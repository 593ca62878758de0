# `if` on a loop variable (as migrate writes a loop-only mask): check analyses both branches, each
# statement masked by its branch's condition; an `if` on tile data stays unanalysed.
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def shift_in_bounds(x, y):
  for j in nl.sequential_range(4):
    t = nl.load(x[0:128, j * 64:(j + 1) * 64])
    if j + 1 < 4:
      nl.store(y[0:128, (j + 1) * 64:(j + 2) * 64], t)
    else:
      nl.store(y[0:128, 0:64], t)


@nki.jit
def wide_tile_in_branch(x, y):
  for j in nl.sequential_range(4):
    t = nl.load(x[0:128, j * 64:(j + 1) * 64])
    if j == 3:
      nl.store(y[0:128, 0:64], t)
    else:
      u = nl.load(x[0:256, 0:64])


@nki.jit
def on_data(x, y):
  t = nl.load(x[0:128, 0:64])
  if t[0, 0] > 0:
    nl.store(y[0:128, 0:64], t)


@nki.jit
def corner_else(x, y):
  for i in nl.affine_range(4):
    for j in nl.affine_range(4):
      t = nl.load(x[i * 32:(i + 1) * 32, j * 64:(j + 1) * 64])
      if i < 3 and j < 2:
        nl.store(y[i * 32:(i + 1) * 32, j * 64:(j + 1) * 64], t)
      else:
        nl.store(y[i * 32:(i + 1) * 32, j * 64:(j + 1) * 64], nl.multiply(t, 2.0))
