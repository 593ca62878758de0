#!/usr/bin/env bash
# README command 2: set up, build, and run every test: unit + lit and the heavy
# full-size NKIBench label in the normal build, then unit + lit again and the
# fuzzers (60 s each) under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase's start, in seconds since this script began: CI has a time budget, and this says where it goes.
phase() { echo "test.sh: ${SECONDS}s: $*"; }
phase "set-up and build"
bash scripts/setup.sh
jobs=$(nproc)
# One ctest run in the normal build: unit, lit and the full-size label (lit-full, and lit-slurm, which
# mostly waits on Slurm's time limits: one slot more than cores keeps both cores busy meanwhile).
phase "unit, lit and full-size label (normal build)"
(cd build && ctest --output-on-failure -j "$((jobs + 1))" -L "unit|lit|full")
# The sanitizer build is clang-14's, with libFuzzer's coverage instrumentation, so the same build
# runs the unit and lit tests under ASan+UBSan and the fuzzers (its `fuzz` test, label full: 60 s
# each) instead of a third build. It needs no benchmarks: ctest does not run them. A sanitizer
# build left by an older GCC configuration is started afresh (the compiler is fixed at configure).
if [ -f build-asan/CMakeCache.txt ] && ! grep -q '^ACCELOPT_FUZZ:BOOL=ON' build-asan/CMakeCache.txt; then
  rm -rf build-asan
fi
phase "sanitizer build"
CC=clang-14 CXX=clang++-14 ACCELOPT_BUILD_DIR=build-asan \
  ACCELOPT_CMAKE_ARGS="-DACCELOPT_SANITIZE=ON -DACCELOPT_FUZZ=ON -DACCELOPT_BENCHMARKS=OFF" bash scripts/setup.sh
phase "unit, lit and fuzzers under ASan+UBSan"
# A 32 MiB quarantine of freed memory instead of ASan's 256 MiB: use-after-free is still caught within the
# last 32 MiB freed, and the tests do half the work (measured on the rewrite suite tests: 5.2 -> 2.8 CPU
# seconds; the rest went to page faults on fresh memory).
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:quarantine_size_mb=32 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd build-asan && ctest --output-on-failure -j "$jobs" -L "unit|lit|full" -E "^lit-(full|slurm)$")
unset ASAN_OPTIONS UBSAN_OPTIONS
