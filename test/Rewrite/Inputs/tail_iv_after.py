import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a):
    out = nl.ndarray((128, 1000), dtype=np.float32, buffer=nl.shared_hbm)
    for j in nl.affine_range(2):
        t = nl.load(a[nl.arange(128)[:, None], 512 * j + nl.arange(512)[None, :]], mask=(512 * j + nl.arange(512)[None, :] < 1000))
        nl.store(out[nl.arange(128)[:, None], 512 * j + nl.arange(512)[None, :]], value=t, mask=(512 * j + nl.arange(512)[None, :] < 1000))
    last = j * 512
    return out
