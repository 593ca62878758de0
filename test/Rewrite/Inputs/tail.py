import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(a, b):
    # a: [128, 1000], b: [128, 128]; out = b.T @ a + a (1000 = 512 + 488: the last tile is masked)
    out = nl.ndarray((128, 1000), dtype=np.float32, buffer=nl.shared_hbm)
    w = nl.load(b[nl.arange(128)[:, None], nl.arange(128)[None, :]])
    t = nl.ndarray((2, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.sbuf)
    acc = nl.zeros((2, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.psum)
    r = nl.ndarray((2, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.sbuf)
    for j in nl.affine_range(2):
        t[j, nl.arange(128)[:, None], nl.arange(512)[None, :]] = nl.load(a[nl.arange(128)[:, None], 512 * j + nl.arange(512)[None, :]], mask=-512 * j + -1 * nl.arange(512)[None, :] + 999 >= 0)
        acc[j, nl.arange(128)[:, None], nl.arange(512)[None, :]] += nisa.nc_matmul(w[nl.arange(128)[:, None], nl.arange(128)[None, :]], t[j, nl.arange(128)[:, None], nl.arange(512)[None, :]], mask=(512 * j + nl.arange(512)[None, :] < 1000))
        r[j, nl.arange(128)[:, None], nl.arange(512)[None, :]] = nl.add(acc[j, nl.arange(128)[:, None], nl.arange(512)[None, :]], t[j, nl.arange(128)[:, None], nl.arange(512)[None, :]], mask=(512 * j + nl.arange(512)[None, :] < 1000) & (nl.arange(128)[:, None] < 128))
        nl.store(out[nl.arange(128)[:, None], 512 * j + nl.arange(512)[None, :]], value=r[j, nl.arange(128)[:, None], nl.arange(512)[None, :]], mask=-512 * j + -1 * nl.arange(512)[None, :] + 999 >= 0)
    return out
