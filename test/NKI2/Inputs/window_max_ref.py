# Reference for window_max.py. Kernel inputs: x=f32[4,8,12]; output f32[4,4,6] (2x2 window maxima).
import numpy as np

C, H, W = 4, 8, 12


def get_inputs():
  x = np.random.normal(loc=0, scale=1.0, size=(C, H, W)).astype(np.float32)
  return [x]


def forward(x):
  return x.reshape(C, H // 2, 2, W // 2, 2).max(axis=(2, 4))


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
