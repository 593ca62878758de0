# Results written into argument tensors, nothing returned (the baremetal style): scale into `scaled`,
# a row sum into `sums`; `unused` is read only, so it is no output.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def scale_and_sum(a, scaled, unused, sums):
  t = nl.load(a)
  u = nl.load(unused)
  nl.store(scaled, value=nl.multiply(t, 2.0))
  nl.store(sums, value=nl.sum(nl.add(t, u), axis=1))


@nki.jit
def writes_nothing(a, scaled, unused, sums):
  t = nl.load(a)
