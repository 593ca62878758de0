import numpy as np


def get_inputs():
  return [np.random.default_rng(7).normal(size=(32, 16, 24)).astype(np.float32)]


def forward(x):
  pooled = x.reshape(32, 8, 2, 12, 2).mean(axis=(2, 4))
  group_max = x.reshape(32, 16, 3, 8).max(axis=(1, 3))[:, :, None]
  row_max = x.max(axis=(1, 2), keepdims=True)
  return pooled, group_max, row_max


def transform_to_nki_inputs(x):
  return x


def transform_nki_outputs(kernel_outputs, reference_outputs):
  return [np.asarray(o) for o in kernel_outputs]
