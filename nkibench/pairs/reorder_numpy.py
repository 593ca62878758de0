# Shared reference of pairs/reorder_before.py and pairs/reorder_after.py.
import numpy as np

M = 1024
N = 1024


def get_inputs():
  x = np.random.normal(loc=0, scale=1.0, size=(M, N)).astype(np.float32)
  w = np.random.normal(loc=0, scale=1.0, size=(M, N)).astype(np.float32)
  return [x, w]


def forward(x, w):
  return np.exp(x) * w


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
