# Reference for matmul.py. Kernel inputs: aT=f32[512,256],b=f32[512,1024];
# output f32[256,1024].
import numpy as np

M = 256
N = 1024
K = 512


def get_inputs():
  a = np.random.normal(loc=0, scale=1.0, size=(M, K)).astype(np.float32)
  b = np.random.normal(loc=0, scale=1.0, size=(K, N)).astype(np.float32)
  return [a, b]


def forward(a, b):
  return np.matmul(a, b)


def transform_to_nki_inputs(inputs):
  # The kernel takes the left operand transposed: aT [K, M].
  a, b = inputs
  return [np.ascontiguousarray(a.T), b]


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
