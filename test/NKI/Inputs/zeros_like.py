# nl.zeros_like (a tensor of another's shape and dtype, zero-filled), annotated assignments
# (`t: tensor[128, 512] = ...`), and a nisa.dma_copy with dge_mode= in the 0.1 dialect.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
from neuronxcc.nki.typing import tensor


@nki.jit
def relu_or_bias(in_tensor):
  out_tensor = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
  inp_tile: tensor[128, 512] = nl.load(in_tensor)
  copy: tensor[128, 512] = nl.zeros_like(inp_tile, buffer=nl.sbuf)
  nisa.dma_copy(dst=copy, src=inp_tile, dge_mode=nisa.dge_mode.hwdge)
  zero = nl.zeros_like(inp_tile)
  positive = nl.greater(copy, zero)
  nl.store(out_tensor, value=nl.where(positive, copy, zero))
  return out_tensor
