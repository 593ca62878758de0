import numpy as np


def get_inputs():
    rng = np.random.default_rng(3)
    return [rng.standard_normal((128, 64)).astype(np.float32), rng.standard_normal((1, 64)).astype(np.float32)]


def forward(x, w):
    y = x * w + 1.0
    return y, y.max(axis=1, keepdims=True)
