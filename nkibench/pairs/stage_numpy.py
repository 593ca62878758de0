# Shared reference of pairs/stage_before.py and pairs/stage_after.py.
import numpy as np

M = 128
K = 512
N = 2048


def get_inputs():
  x = np.random.normal(loc=0, scale=1.0, size=(M, K)).astype(np.float32)
  w = np.random.normal(loc=0, scale=1.0, size=(K, N)).astype(np.float32)
  return [x, w]


def forward(x, w):
  return np.matmul(x, w)


def transform_to_nki_inputs(inputs):
  # The kernels take x transposed: xT [K, M].
  x, w = inputs
  return [np.ascontiguousarray(x.T), w]


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
