import numpy as np


def get_inputs():
  return [np.random.default_rng(6).normal(size=(200, 256)).astype(np.float32)]


def forward(a):
  return np.stack([a.mean(axis=1), a.var(axis=1)], axis=1)


def transform_to_nki_inputs(inputs):
  return inputs


def transform_nki_outputs(kernel_outputs, reference_outputs):
  return [np.asarray(o) for o in kernel_outputs]
