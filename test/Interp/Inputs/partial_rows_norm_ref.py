import numpy as np
def get_inputs(): return [np.random.normal(0, 1, (200, 96)).astype(np.float32)]
def forward(a): return a / np.mean(a * a, axis=1, keepdims=True) + np.max(a, axis=1, keepdims=True)
def transform_to_nki_inputs(x): return x
def transform_nki_outputs(k, r): return [np.asarray(k)]
