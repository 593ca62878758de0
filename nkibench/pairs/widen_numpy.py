# Shared reference of pairs/widen_before.py and pairs/widen_after.py.
import numpy as np

P = 128
N = 4096


def get_inputs():
  a = np.random.normal(loc=0, scale=1.0, size=(P, N)).astype(np.float32)
  b = np.random.normal(loc=0, scale=1.0, size=(P, N)).astype(np.float32)
  return [a, b]


def forward(a, b):
  return np.exp(a) * b


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
