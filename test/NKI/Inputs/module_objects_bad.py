import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


class Cfg:
  tile = 128


class Sized:
  def __init__(self, n):
    self.n = n


CFG = Cfg()


@nki.jit
def kernel(a):
  # a: f32[256, 512]; reads an attribute the object does not have, then builds a class with an __init__
  t = nl.load(a[0:CFG.rows, :])
  s = Sized(4)
  return t
