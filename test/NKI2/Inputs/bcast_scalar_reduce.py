import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def shift_rows_max(x, w):
    # y = x * w (w one row, broadcast over the partitions) + 1; also the max of each row of y.
    P, F = x.shape
    xs = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=xs, src=x)
    ws = nl.ndarray((1, F), dtype=w.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ws, src=w)
    wb = nl.broadcast_to(ws, (P, F))
    y = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=y, data1=xs, data2=wb, op=nl.multiply)
    z = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    m = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar_reduce(dst=z, data=y, op0=nl.add, operand0=1.0, reduce_op=nl.maximum, reduce_res=m)
    out = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=z)
    row_max = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=row_max, src=m)
    return out, row_max
