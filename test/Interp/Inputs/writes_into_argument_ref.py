import numpy as np


def get_inputs():
  rng = np.random.default_rng(3)
  a = rng.normal(size=(128, 64)).astype(np.float32)
  unused = rng.normal(size=(128, 64)).astype(np.float32)
  return [a, np.zeros((128, 64), np.float32), unused, np.zeros((128, 1), np.float32)]


def forward(a, scaled, unused, sums):
  return a * 2.0, (a + unused).sum(axis=1, keepdims=True)


def transform_to_nki_inputs(inputs):
  return inputs


def transform_nki_outputs(kernel_outputs, reference_outputs):
  return [np.asarray(o) for o in kernel_outputs]
