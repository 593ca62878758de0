#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-14 (ASan+UBSan) and runs each for
# SECONDS (default 300) from a seed corpus of our kernels and the NKIBench kernels.
#   bash scripts/fuzz.sh [SECONDS] [frontend|interp|all]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
which=${2:-all}
CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DACCELOPT_FUZZ=ON \
  -DACCELOPT_LAYERS="Syntax;NKI;Analysis;Interp" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz --target fuzz-frontend fuzz-interp -j "$(nproc)"
for target in frontend interp; do
  [ "$which" = all ] || [ "$which" = "$target" ] || continue
  corpus=build-fuzz/corpus-$target
  mkdir -p "$corpus"
  cp nkibench/kernels/*.py test/Analysis/*.py "$corpus"/
  if [ "$target" = frontend ]; then
    cp nkibench/pairs/*.py "$corpus"/
    cp nkibench/upstream/kernels/*.py "$corpus"/
  fi
  ./build-fuzz/bin/fuzz-$target -max_total_time="$seconds" -max_len=16384 -timeout=20 -rss_limit_mb=2048 "$corpus"
done
