import numpy as np


def get_inputs():
  return [np.random.default_rng(8).normal(size=(128, 512)).astype(np.float32)]


def forward(x):
  return np.maximum(x, 0.0)


def transform_to_nki_inputs(inputs):
  return inputs


def transform_nki_outputs(kernel_outputs, reference_outputs):
  return [np.asarray(o) for o in kernel_outputs]
