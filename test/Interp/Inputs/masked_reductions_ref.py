import numpy as np


def get_inputs():
  return [np.random.default_rng(5).normal(size=(64, 10)).astype(np.float32)]


def forward(x):
  padded_max = np.pad(x, ((0, 0), (1, 1)), constant_values=-np.inf)
  padded_sum = np.pad(x, ((0, 0), (1, 1)))
  windows = np.stack([padded_max[:, k:k + 10] for k in range(3)], axis=2)
  sums = np.stack([padded_sum[:, k:k + 10] for k in range(3)], axis=2).sum(axis=2)
  return windows.max(axis=2), sums


def transform_to_nki_inputs(inputs):
  return inputs


def transform_nki_outputs(kernel_outputs, reference_outputs):
  return [np.asarray(o) for o in kernel_outputs]
