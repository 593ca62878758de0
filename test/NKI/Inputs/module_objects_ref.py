import numpy as np
def get_inputs(): return [np.random.rand(256, 512).astype(np.float32)]
def forward(a): return a * 2.0 + 3.0
def transform_to_nki_inputs(x): return x
def transform_nki_outputs(k, r): return [np.asarray(k)]
