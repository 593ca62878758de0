import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    # x: [128, 1024]; each 256-column tile minus its row maxima, and 2 * x in 256-column tiles
    norm = nl.ndarray((128, 1024), dtype=np.float32, buffer=nl.shared_hbm)
    out = nl.ndarray((128, 1024), dtype=np.float32, buffer=nl.shared_hbm)
    for r in nl.affine_range(4):
        v = nl.load(x[nl.arange(128)[:, None], 256 * r + nl.arange(256)[None, :]])
        peak = nl.max(v, axis=1, keepdims=True)
        nl.store(norm[nl.arange(128)[:, None], 256 * r + nl.arange(256)[None, :]], value=nl.subtract(v, peak))
    for c in nl.affine_range(4):
        v2 = nl.load(x[nl.arange(128)[:, None], 256 * c + nl.arange(256)[None, :]])
        nl.store(out[nl.arange(128)[:, None], 256 * c + nl.arange(256)[None, :]], value=nl.multiply(v2, 2.0))
    # The same with slices: not widened (only nl.arange tiles are).
    half = nl.ndarray((128, 1024), dtype=np.float32, buffer=nl.shared_hbm)
    for h in nl.affine_range(4):
        v3 = nl.load(x[0:128, 256 * h:256 * h + 256])
        nl.store(half[0:128, 256 * h:256 * h + 256], value=nl.multiply(v3, 0.5))
    return norm, out, half
