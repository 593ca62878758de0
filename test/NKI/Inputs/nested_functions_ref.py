import numpy as np
def get_inputs(): return [np.random.rand(256, 512).astype(np.float32), 3.0]
def forward(a, scale): return a * scale + 1.0
def transform_to_nki_inputs(x): return x
def transform_nki_outputs(k, r): return [np.asarray(k)]
