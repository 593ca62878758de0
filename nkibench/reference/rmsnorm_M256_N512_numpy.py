import numpy as np

M = 256
N = 512


def get_inputs():
  x = np.random.normal(loc=0, scale=1.0, size=(M, N)).astype(np.float32)
  gamma = np.random.normal(loc=0, scale=1.0, size=(N,)).astype(np.float32)
  eps = 1e-5
  return [x, gamma, eps]


def forward(x, gamma, eps):
  mean_sq = np.mean(np.square(x), axis=-1, keepdims=True)
  return x / np.sqrt(mean_sq + eps) * gamma


def transform_to_nki_inputs(inputs):
  # The kernel reads the weight as a single row [1, N].
  x, gamma, eps = inputs
  return [x, np.reshape(gamma, (1, N)), eps]


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
