import numpy as np
def get_inputs(): return [np.random.normal(0, 1, (384, 512)).astype(np.float32), np.random.normal(0, 1, (384, 512)).astype(np.float32)]
def forward(a, b): return a + b
def transform_to_nki_inputs(x): return x
def transform_nki_outputs(k, r): return [np.asarray(k)]
