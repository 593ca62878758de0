# Partial tiles spelled with masks (NKI 0.1): rows M = 200 = 128 + 72, columns N = 700 = 512 + 188.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(x, y):
  M, N = x.shape
  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
  ip = nl.arange(128)[:, None]
  jf = nl.arange(512)[None, :]
  for i in nl.affine_range((M + 127) // 128):
    # the row bound alone, as `i_p < n`
    r = nl.load(y[i * 128 + ip, 0], mask=(i * 128 + ip < M))
    for j in nl.affine_range((N + 511) // 512):
      # a conjunction (&) of the row bound and NKIBench's affine form on the columns
      t = nl.load(x[i * 128 + ip, j * 512 + jf], mask=((i * 128 + ip < M) & (-512 * j - jf + (N - 1) >= 0)))
      e = nisa.activation(op=nl.exp, data=t, mask=((i * 128 + ip < M) & (-512 * j - jf + (N - 1) >= 0)))
      s = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
      s[ip, jf] = nl.add(e, r, mask=(ip <= M - 1 - i * 128) & (jf < N - j * 512))
      nl.store(out[i * 128 + ip, j * 512 + jf], value=s[ip, jf],
               mask=((i * 128 + ip < M) & (-512 * j - jf + (N - 1) >= 0)))
  return out
