#!/usr/bin/env bash
# README command 1: set up, build, and run accelopt-rewrite on a bundled example kernel.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
example=nkibench/kernels/matmul_K512_M256_N1024.py
inputs='lhsT=f32[512,256],rhs=f32[512,1024]'
echo "== accelopt-rewrite show $example"
./build/bin/accelopt-rewrite show "$example" --inputs "$inputs"
echo "== accelopt-rewrite check $example"
./build/bin/accelopt-rewrite check "$example" --inputs "$inputs"
