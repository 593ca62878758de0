import numpy as np
def get_inputs():
  r = np.random.default_rng(6)
  return [r.normal(size=(300, 256)).astype(np.float32), 1e-5, r.normal(size=(256,)).astype(np.float32), r.normal(size=(256,)).astype(np.float32)]
def forward(x, eps, g, b):
  m = x.mean(axis=1, keepdims=True)
  v = ((x - m) ** 2).mean(axis=1, keepdims=True)
  return (x - m) / np.sqrt(v + eps) * g + b
def transform_to_nki_inputs(inputs):
  return inputs
def transform_nki_outputs(kernel_outputs, reference_outputs):
  return [np.asarray(o) for o in kernel_outputs]
