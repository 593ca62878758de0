import numpy as np
def get_inputs(): return [np.random.normal(0, 1, (96, 128)).astype(np.float32), np.random.normal(0, 1, (128, 256)).astype(np.float32)]
def forward(x, y): return x @ y
def transform_to_nki_inputs(x): return x
def transform_nki_outputs(k, r): return [np.asarray(k)]
