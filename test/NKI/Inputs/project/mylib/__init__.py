import neuronxcc.nki.language as nl
from .sizes import P


def store_rows(dst, i, t):
  nl.store(dst[i * P:(i + 1) * P, :], value=t)
