#!/usr/bin/env bash
# README command 2: set up, build, and run every test: unit + lit in the normal
# build, the heavy full-size NKIBench label once, then unit + lit again under
# AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc)
(cd build && ctest --output-on-failure -j "$jobs" -L full)
# The sanitizer build needs no benchmarks: ctest does not run them.
ACCELOPT_BUILD_DIR=build-asan ACCELOPT_CMAKE_ARGS="-DACCELOPT_SANITIZE=ON -DACCELOPT_BENCHMARKS=OFF" bash scripts/setup.sh
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd build-asan && ctest --output-on-failure -j "$jobs" -L "unit|lit" -E "^lit-full$")
unset ASAN_OPTIONS UBSAN_OPTIONS
(cd build && ctest --output-on-failure -j "$jobs" -L "unit|lit" -E "^lit-full$")
