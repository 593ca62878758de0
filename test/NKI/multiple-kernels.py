# A file with several kernels and ordinary Python around them.
# RUN: %accelopt show %s --inputs 'x=f32[128,512]' | %FileCheck %s
# RUN: %accelopt show %s --inputs 'x=f32[128,512]' --kernel second | %FileCheck %s --check-prefix=ONE
import argparse
import numpy as np
from neuronxcc import nki
import neuronxcc.nki.language as nl
from neuronxcc.nki.language import par_dim

TILE = 128


def helper_not_a_kernel(n):
  return n * 2


# CHECK: kernel first
# ONE-NOT: kernel first
@nki.jit
def first(x):
  out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  t = nl.load(x[0:TILE, 0:512])
  nl.store(out[0:128, 0:512], value=t)
  return out


# CHECK: kernel second
# ONE: kernel second
# ONE: L0 {{.*}} # affine_range, trip 4
# ONE: buf sbuf [4, par_dim(128), 128] float32 512 (x4 blocks = 2048)
@nki.jit
def second(x):
  out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  buf = nl.ndarray((4, par_dim(128), 128), dtype=nl.float32, buffer=nl.sbuf)
  for j in nl.affine_range(512 // TILE):
    buf[j, 0:128, 0:128] = nl.load(x[0:128, j * TILE:(j + 1) * TILE])
    nl.store(out[0:128, j * TILE:(j + 1) * TILE], value=buf[j, 0:128, 0:128])
  return out


if __name__ == "__main__":
  parser = argparse.ArgumentParser()
  parser.add_argument("--n", type=int, default=1)
