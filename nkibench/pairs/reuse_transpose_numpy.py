# Shared reference of pairs/reuse_transpose_before.py and pairs/reuse_transpose_after.py.
import numpy as np

M = 512
K = 512
N = 2048


def get_inputs():
  x = np.random.normal(loc=0, scale=1.0, size=(M, K)).astype(np.float32)
  w = np.random.normal(loc=0, scale=1.0, size=(K, N)).astype(np.float32)
  return [x, w]


def forward(x, w):
  return np.matmul(x, w)


def transform_to_nki_inputs(inputs):
  return inputs


def transform_nki_outputs(k_res, ref):
  return [np.reshape(k_res, ref.shape)]
