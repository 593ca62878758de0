import numpy as np
def get_inputs(): return [np.random.rand(300, 1100).astype(np.float32)]
def forward(a): return np.exp(a)
def transform_to_nki_inputs(x): return x
def transform_nki_outputs(k, r): return [np.asarray(k)]
