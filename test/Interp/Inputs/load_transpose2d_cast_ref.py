import numpy as np
def get_inputs(): return [np.random.normal(0, 1, (192, 32)).astype(np.float16)]
def forward(a): return np.exp(a.T.astype(np.float32))
def transform_to_nki_inputs(x): return x
def transform_nki_outputs(k, r): return [np.asarray(k)]
