import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a):
    # a: [128, 1800]; out = 2 * a in 1024-column blocks of two 512-column tiles (1800 = 1024 + 512 + 264)
    out = nl.ndarray((128, 1800), dtype=np.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(512)[None, :]
    for b in nl.affine_range(2):
        x = nl.ndarray((2, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.sbuf)
        y = nl.ndarray((2, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.sbuf)
        for h in nl.affine_range(2):
            x[h, i_p, i_f] = nl.load(a[i_p, 1024 * b + 512 * h + i_f], mask=(1024 * b + 512 * h + i_f < 1800))
            y[h, i_p, i_f] = nl.multiply(x[h, i_p, i_f], 2.0, mask=(1024 * b + 512 * h + i_f < 1800))
            nl.store(out[i_p, 1024 * b + 512 * h + i_f], value=y[h, i_p, i_f], mask=(1024 * b + 512 * h + i_f < 1800))
    return out
