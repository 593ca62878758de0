# A layernorm in the 0.1 tutorial style: every statement masked to the rows of a partial last tile, with
# tiles inside arithmetic (`var + epsilon`), behind a method call (`gamma.broadcast_to(...)`) and inside a
# nested call masked like its statement (`nl.mean(nl.square(t, mask=m), ..., mask=m)`).
import math
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def layernorm_v1(input_tensor, epsilon, gamma_vector, beta_vector):
  output_tensor = nl.ndarray(input_tensor.shape, dtype=input_tensor.dtype, buffer=nl.shared_hbm)
  assert input_tensor.shape[1] <= nl.tile_size.gemm_moving_fmax
  i_p_io = nl.arange(nl.tile_size.pmax)[:, None]
  i_f_io = nl.arange(input_tensor.shape[1])[None, :]
  i_p_param = nl.arange(1)[:, None]
  gamma = nl.load(gamma_vector.reshape((1, input_tensor.shape[1]))[i_p_param, i_f_io])
  beta = nl.load(beta_vector.reshape((1, input_tensor.shape[1]))[i_p_param, i_f_io])
  for i in nl.affine_range(math.ceil(input_tensor.shape[0] / nl.tile_size.pmax)):
    rows = i * nl.tile_size.pmax + i_p_io
    x = nl.load(input_tensor[rows, i_f_io], mask=(rows < input_tensor.shape[0]))
    mean = nl.mean(x, axis=[1], mask=(rows < input_tensor.shape[0]))
    shifted = nl.subtract(x, mean, mask=(rows < input_tensor.shape[0]))
    var = nl.mean(nl.square(shifted, mask=(rows < input_tensor.shape[0])), axis=[1], mask=(rows < input_tensor.shape[0]))
    rstd = nl.rsqrt(var + epsilon, mask=(rows < input_tensor.shape[0]))
    y = nl.multiply(shifted, rstd, mask=(rows < input_tensor.shape[0]))
    y = nl.multiply(y, gamma.broadcast_to((nl.tile_size.pmax, input_tensor.shape[1])), mask=(rows < input_tensor.shape[0]))
    y = nl.add(y, beta.broadcast_to((nl.tile_size.pmax, input_tensor.shape[1])), mask=(rows < input_tensor.shape[0]))
    nl.store(output_tensor[rows, i_f_io], value=y, mask=(rows < input_tensor.shape[0]))
  return output_tensor
