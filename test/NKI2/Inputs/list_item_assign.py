import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def row_sums(x):
    xs = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=xs, src=x)
    reduced = list(x.shape)
    reduced[-1] = 1
    s = nl.ndarray(tuple(reduced), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=s, op=nl.add, data=xs, axis=(1,), keepdims=True)
    out = nl.ndarray(tuple(reduced), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=s)
    return out


@nki.jit
def past_the_end(x):
    dims = list(x.shape)
    dims[2] = 1
    out = nl.ndarray(tuple(dims), dtype=nl.float32, buffer=nl.shared_hbm)
    return out
