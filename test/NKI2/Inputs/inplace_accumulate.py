import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def sum_slices(x):
    # out = x[0] + x[1] + ...: every iteration adds its slice into one tile, in any order.
    n, P, F = x.shape
    acc = nl.zeros((P, F), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(n):
        t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[i])
        nisa.tensor_tensor(dst=acc, data1=t, data2=acc, op=nl.add)
    out = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=acc)
    return out


@nki.jit
def diff_slices(x):
    # acc - x[i] depends on the order of the iterations: not an accumulation.
    n, P, F = x.shape
    acc = nl.zeros((P, F), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(n):
        t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[i])
        nisa.tensor_tensor(dst=acc, data1=t, data2=acc, op=nl.subtract)
    out = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=acc)
    return out
