# Reference for reduce.py. Kernel inputs: x=f32[512,256];
# outputs f32[1,256],f32[512,1] (column sums, row maxima).
import numpy as np

M = 512
N = 256


def get_inputs():
  x = np.random.normal(loc=0, scale=1.0, size=(M, N)).astype(np.float32)
  return [x]


def forward(x):
  colsum = np.sum(x, axis=0, keepdims=True)
  rowmax = np.max(x, axis=1, keepdims=True)
  return colsum, rowmax


def transform_to_nki_inputs(inputs):
  return inputs


def transform_nki_outputs(k_res, ref):
  # The kernel may return one array or a tuple; give each output the shape
  # of the matching reference output.
  kernel_outs = k_res if isinstance(k_res, tuple) else (k_res,)
  ref_outs = ref if isinstance(ref, tuple) else (ref,)
  result = []
  for k_out, r_out in zip(kernel_outs, ref_outs):
    if hasattr(r_out, "shape"):
      result.append(np.reshape(k_out, r_out.shape))
    else:
      result.append(k_out)
  return result
