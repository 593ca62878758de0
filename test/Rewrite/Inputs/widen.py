import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(x, w):
    # x: [128, 1000], w: [128, 128]
    y = nl.ndarray((128, 1000), dtype=np.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(250)[None, :]
    # Elementwise on 250-column tiles: 4 tiles.
    for j in nl.affine_range(4):
        t = nl.ndarray((128, 250), dtype=np.float32, buffer=nl.sbuf)
        t[i_p, i_f] = nl.load(x[i_p, 250 * j + i_f])
        u = nl.multiply(t[i_p, i_f], 2.0)
        nl.store(y[i_p, 250 * j + i_f], value=u)
    # A matmul on 500-column tiles (moving operand at most 512 columns), masked to 1000 columns.
    wt = nl.load(w[i_p, nl.arange(128)[None, :]])
    for m in nl.affine_range(2):
        xt = nl.load(x[i_p, 500 * m + nl.arange(500)[None, :]], mask=(500 * m + nl.arange(500)[None, :] < 1000))
        ps = nl.ndarray((128, 500), dtype=np.float32, buffer=nl.psum)
        ps[i_p, nl.arange(500)[None, :]] = nisa.nc_matmul(wt, xt)
        nl.store(y[i_p, 500 * m + nl.arange(500)[None, :]], value=ps, mask=(500 * m + nl.arange(500)[None, :] < 1000))
    # A reduction along the free axis of each tile.
    s = nl.ndarray((128, 4), dtype=np.float32, buffer=nl.sbuf)
    for r in nl.affine_range(4):
        v = nl.load(x[i_p, 250 * r + i_f])
        s[i_p, r] = nl.sum(v, axis=1)
    # Masked elementwise on 400-column tiles: 3 tiles, the last one partial.
    z = nl.ndarray((128, 1000), dtype=np.float32, buffer=nl.shared_hbm)
    for q in nl.affine_range(3):
        a = nl.load(x[i_p, 400 * q + nl.arange(400)[None, :]], mask=(400 * q + nl.arange(400)[None, :] < 1000))
        nl.store(z[i_p, 400 * q + nl.arange(400)[None, :]], value=nl.exp(a), mask=(-400 * q + -1 * nl.arange(400)[None, :] + 999 >= 0))
    return y, z
