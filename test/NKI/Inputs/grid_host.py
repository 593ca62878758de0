import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def add_kernel(a_input, b_input):
  # Instance (x, y) adds the 128 x 512 block (x, y).
  c_output = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)
  ix = nl.program_id(0) * 128 + nl.arange(128)[:, None]
  iy = nl.program_id(1) * 512 + nl.arange(512)[None, :]
  a_tile = nl.load(a_input[ix, iy])
  b_tile = nl.load(b_input[ix, iy])
  nl.store(c_output[ix, iy], value=a_tile + b_tile)
  return c_output


def add(a, b):
  # The host function sizes the grid from the arrays it passes.
  grid_x = a.shape[0] // 128
  grid_y = a.shape[1] // 512
  return add_kernel[grid_x, grid_y](a, b)
