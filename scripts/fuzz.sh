#!/usr/bin/env bash
# Builds the libFuzzer front-end target with clang-14 and runs it for SECONDS
# (default 300) from a seed corpus of our kernels and the NKIBench kernels.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DACCELOPT_FUZZ=ON \
  -DACCELOPT_LAYERS="Syntax;NKI;Analysis" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz --target fuzz-frontend -j "$(nproc)"
corpus=build-fuzz/corpus
mkdir -p "$corpus"
cp nkibench/kernels/*.py nkibench/pairs/*.py test/Analysis/*.py "$corpus"/
[ -d ../shared/nkibench/kernels ] && cp ../shared/nkibench/kernels/*.py "$corpus"/
./build-fuzz/bin/fuzz-frontend -max_total_time="$seconds" -max_len=65536 -timeout=10 "$corpus"
