import numpy as np


def get_inputs():
    return [np.random.default_rng(5).standard_normal((4, 128, 256)).astype(np.float32)]


def forward(x):
    return x.sum(axis=0)
