import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(a):
  # The same kernel without a platform target: trn1 (NeuronCore-v2).
  assert nisa.get_nc_version() == nisa.nc_version.gen3, "trn2 only"
  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
  nl.store(out, value=nl.load(a))
  return out
