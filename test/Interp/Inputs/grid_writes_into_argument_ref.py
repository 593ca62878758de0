import numpy as np


def get_inputs():
  rng = np.random.default_rng(5)
  a_t = rng.normal(size=(128, 256)).astype(np.float32)
  b = rng.normal(size=(128, 1024)).astype(np.float32)
  return [a_t, b, np.zeros((256, 1024), np.float32)]


def forward(a_t, b, result):
  return a_t.T @ b


def transform_to_nki_inputs(inputs):
  return inputs


def transform_nki_outputs(kernel_outputs, reference_outputs):
  return [np.asarray(o) for o in kernel_outputs]
