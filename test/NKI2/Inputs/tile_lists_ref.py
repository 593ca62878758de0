import numpy as np


def get_inputs():
  rng = np.random.default_rng(5)
  return [rng.normal(size=(256, 256)).astype(np.float32), rng.normal(size=(256, 1024)).astype(np.float32)]


def forward(aT, b):
  return aT.T @ b


def transform_to_nki_inputs(inputs):
  return inputs


def transform_nki_outputs(kernel_outputs, reference_outputs):
  return [np.asarray(kernel_outputs)]
