import numpy as np
def get_inputs(): return [np.random.rand(128, 512).astype(np.float32)]
def forward(a):
    out = a.copy()
    for j in range(4):
        out[:, j * 128:(j + 1) * 128] = a[:, j * 128:(j + 1) * 128] * (j + 1) + 10.0
    return out
def transform_to_nki_inputs(x): return x
def transform_nki_outputs(k, r): return [np.asarray(k)]
