import numpy as np
grid = (2, 2)
def get_inputs(): return [np.random.normal(0, 1, (256, 512)).astype(np.float32)]
def forward(a):
  out = a * 2
  for i in range(2):
    for c in range(4):
      if c % 2 <= i:
        out[i*128:(i+1)*128, c*128:(c+1)*128] = a[i*128:(i+1)*128, c*128:(c+1)*128] + 1
  return out
def transform_to_nki_inputs(x): return x
def transform_nki_outputs(k, r): return [np.asarray(k)]
