import numpy as np


def get_inputs():
  return [np.random.default_rng(2).uniform(1.0, 2.0, size=(256, 512)).astype(np.float32)]


def forward(a):
  return 0.5 / a


def transform_to_nki_inputs(inputs):
  return inputs


def transform_nki_outputs(kernel_outputs, reference_outputs):
  return [np.asarray(kernel_outputs)]
