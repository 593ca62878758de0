# Test fixture: the few neuronxcc.nki.language calls the test kernels use, with
# numpy semantics (a tile is a numpy array; HBM tensors are the arguments).
import numpy as np

shared_hbm, private_hbm, hbm, sbuf, psum = "shared_hbm", "private_hbm", "hbm", "sbuf", "psum"
float32 = np.float32
bfloat16 = np.float32
exp = np.exp


class tile_size:
    pmax = 128


def par_dim(n):
    return n


def ndarray(shape, dtype=np.float32, buffer=None):
    return np.zeros(shape, dtype=np.float32 if dtype is None else dtype)


zeros = ndarray


def affine_range(*args):
    return range(*args)


sequential_range = static_range = affine_range


def load(src, dtype=None, mask=None):
    return np.array(src, dtype=dtype or src.dtype)


def store(dst, value, mask=None):
    dst[...] = value


def add(a, b, dtype=None):
    return np.add(a, b)


def subtract(a, b, dtype=None):
    return np.subtract(a, b)


def multiply(a, b, dtype=None):
    return np.multiply(a, b)
