import numpy as np
# kernel(x) of default_args.py: `factor` and `rows` keep their defaults.
def get_inputs(): return [np.random.rand(256, 64).astype(np.float32)]
def forward(x): return x * 3
def transform_to_nki_inputs(x): return x
def transform_nki_outputs(k, r): return [np.asarray(k)]
