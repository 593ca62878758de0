import numpy as np
def get_inputs(): return [np.random.rand(2, 128, 768).astype(np.float32)]
def forward(a): return a + 1.0
def transform_to_nki_inputs(x): return x
def transform_nki_outputs(k, r): return [np.asarray(k)]
