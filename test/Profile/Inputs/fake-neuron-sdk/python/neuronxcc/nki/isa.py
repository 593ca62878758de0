# Test fixture: the neuronxcc.nki.isa calls the test kernels use (numpy semantics).
def activation(op, data, bias=None, scale=1.0, dtype=None):
    out = op(data * scale if bias is None else data * scale + bias)
    return out if dtype is None else out.astype(dtype)
