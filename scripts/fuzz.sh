#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-14 (ASan+UBSan, in their own build
# directory, or in a build already configured with -DACCELOPT_FUZZ=ON) and runs each for SECONDS (default 300) from a seed corpus
# (test/fuzz/make_seeds.py: our kernels, NKIBench kernels, deep/long expressions,
# LSP sessions, op JSON, memory exports).
#   bash scripts/fuzz.sh [SECONDS] [all|frontend|interp|lsp|ops|memory-import ...]
# Environment: FUZZ_JOBS=N runs N fuzzers at a time (default 1; one process each),
# ACCELOPT_FUZZ_BUILD_DIR (default build-fuzz). Exits 1 if a fuzzer found a crash,
# a leak or a timeout; the input is kept as BUILD_DIR/artifacts/<target>-crash-*,
# the log as BUILD_DIR/logs/<target>.log.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
shift || true
targets=("$@")
all=(frontend interp lsp ops memory-import)
if ((${#targets[@]} == 0)) || [ "${targets[0]}" = all ]; then targets=("${all[@]}"); fi
for t in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $t "* ]] || { echo "fuzz.sh: unknown target '$t' (${all[*]})" >&2; exit 2; }
done
build=${ACCELOPT_FUZZ_BUILD_DIR:-build-fuzz}
# Absolute: a fuzzer may chdir (the LSP target works in a directory of its own).
mkdir -p "$build" && build=$(cd "$build" && pwd)
jobs=${FUZZ_JOBS:-1}

# A build already configured for fuzzing (scripts/test.sh's sanitizer build) is used as it is.
if ! grep -q '^ACCELOPT_FUZZ:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DACCELOPT_FUZZ=ON -DACCELOPT_BENCHMARKS=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" -j "$(nproc)" $(for t in "${targets[@]}"; do echo --target "fuzz-$t"; done)

mkdir -p "$build/logs" "$build/artifacts"
run_one() {
  local t=$1 corpus="$build/corpus-$1" dict=()
  mkdir -p "$corpus"
  /usr/bin/python3 test/fuzz/make_seeds.py "$t" "$corpus"
  if [ "$t" = frontend ] || [ "$t" = interp ]; then dict=(-dict="$PWD/test/fuzz/frontend.dict"); fi
  local start=$SECONDS rc=0
  # In-process (no -jobs): the final stats and any crash report land in this log, not in fuzz-N.log.
  "$build/bin/fuzz-$t" -max_total_time="$seconds" -max_len=16384 -timeout=20 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" "${dict[@]}" "$corpus" \
    >"$build/logs/$t.log" 2>&1 || rc=$?
  local runs
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build/logs/$t.log" | grep -o '[0-9]*$' | tail -1)
  local cov
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$build/logs/$t.log" | tail -1)
  echo "fuzz-$t: ${runs:-?} runs, ${cov:-cov: ?} in $((SECONDS - start)) s, exit $rc (log $build/logs/$t.log)"
  if [ "$rc" != 0 ]; then grep -m 8 -E '^==[0-9]+==|^SUMMARY|Test unit written|ALARM|out-of-memory|runtime error' "$build/logs/$t.log" || true; fi
  return "$rc"
}

# One at a time, or FUZZ_JOBS at a time; each run leaves its exit status in logs/<target>.rc.
for t in "${targets[@]}"; do
  rm -f "$build/logs/$t.rc"
  if ((jobs > 1)); then
    while (($(jobs -rp | wc -l) >= jobs)); do sleep 1; done
    (rc=0; run_one "$t" || rc=$?; echo "$rc" >"$build/logs/$t.rc") &
  else
    rc=0; run_one "$t" || rc=$?; echo "$rc" >"$build/logs/$t.rc"
  fi
done
wait
failed=0
for t in "${targets[@]}"; do
  [ "$(cat "$build/logs/$t.rc" 2>/dev/null)" = 0 ] || failed=1
done
exit "$failed"
