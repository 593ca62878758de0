import numpy as np
def get_inputs(): return [np.random.normal(0, 1, (256, 64)).astype(np.float32)]
def forward(x): return x
def transform_to_nki_inputs(x): return x
def transform_nki_outputs(k, r): return [np.asarray(k)]
