#!/usr/bin/env bash
# README command 1: set up, build, and run accelopt-rewrite on a bundled example
# kernel: its listing, the verifier, the estimated profile, then the optimization loop.
set -euo pipefail
cd "$(dirname "$0")/.."
ACCELOPT_TARGETS=accelopt-rewrite bash scripts/setup.sh
example=nkibench/pairs/hoist_load_before.py
inputs='xT=f32[128,1024],w=f32[128,512]'
tool=./build/bin/accelopt-rewrite
echo "== accelopt-rewrite show $example"
$tool show "$example" --inputs "$inputs"
echo "== accelopt-rewrite check $example"
$tool check "$example" --inputs "$inputs"
echo "== accelopt-rewrite profile $example"
$tool profile "$example" --inputs "$inputs"
echo "== accelopt-rewrite $example  (optimize: beam search, verified candidates)"
$tool "$example" --inputs "$inputs" --iterations 2 --memory build/example-memory.db \
  --report build/example-report -o build/example-best.py
echo "report: build/example-report/report.md"
