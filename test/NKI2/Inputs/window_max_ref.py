# Reference for window_max.py. Kernel inputs: x=f32[4,8,12]; output f32[4,4,6] (2x2 window maxima).
import numpy as np

C, H, W = 4, 8, 12


def get_inputs():
  x = np.random.normal(loc=0, scale=1.0, size=(C, H, W)).astype(np.float32)
  return [x]


def forward(x):
  return x.reshape(C, H // 2, 2, W // 2, 2).max(axis=(2, 4))


def transform_to_nki_inputs(inputs):
  return inputs


def transform_nki_outputs(k_res, ref):
  return [k_res]
