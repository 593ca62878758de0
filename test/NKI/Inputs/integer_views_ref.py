import numpy as np
def get_inputs(): return [np.random.normal(0, 1, (2, 256, 128)).astype(np.float32), np.random.normal(0, 1, (2, 3, 256, 128)).astype(np.float32)]
def forward(q, k): return 3.0 * q + k.sum(axis=1)
def transform_to_nki_inputs(x): return x
def transform_nki_outputs(k, r): return [np.asarray(k)]
