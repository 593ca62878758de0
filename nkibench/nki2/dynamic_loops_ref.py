# Reference for dynamic_loops.py. Kernel inputs: x=f32[4,128,256] (the [512, 256]
# matrix split into 4 row tiles); outputs f32[4,128,256],f32[4,128,256].
import numpy as np

M = 512
N = 256
T = 4


def get_inputs():
  x = np.random.normal(loc=0, scale=1.0, size=(M, N)).astype(np.float32)
  return [x]


def forward(x):
  return np.exp(x), np.float32(2.0) * x + np.float32(1.0)


def transform_to_nki_inputs(inputs):
  return [np.reshape(inputs[0], (T, M // T, N))]


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
