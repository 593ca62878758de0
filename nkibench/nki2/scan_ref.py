# Reference for scan.py. Kernel inputs: a=f32[128,2048],b=f32[128,2048];
# output f32[128,2048]. a is drawn in (0, 1) (uniform(0,1) in manifest terms)
# so the recurrence stays bounded.
import numpy as np

P = 128
T = 2048


def get_inputs():
  a = np.random.uniform(low=0.0, high=1.0, size=(P, T)).astype(np.float32)
  b = np.random.normal(loc=0, scale=1.0, size=(P, T)).astype(np.float32)
  return [a, b]


def forward(a, b):
  h = np.zeros((P, T), dtype=np.float32)
  prev = np.zeros((P,), dtype=np.float32)
  for t in range(T):
    prev = a[:, t] * prev + b[:, t]
    h[:, t] = prev
  return h


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
