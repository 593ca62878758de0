#!/usr/bin/env bash
# Fails when the tree drifts from its style; scripts/apply-style.sh fixes both kinds of drift.
#   (default) format: every C++ file under lib/ tools/ test/ is as clang-format-14 (.clang-format)
#             writes it. About a second of CPU: CTest runs it (test "style", label unit).
#   --naming  also the naming of .clang-tidy: a clang-tidy pass over every translation unit, minutes
#             on 2 cores, so not part of CTest; run it before merging renames.
#
#   scripts/check-style.sh [--naming [BUILD_DIR]]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/style-lib.sh

command -v clang-format-14 >/dev/null || { echo "check-style: clang-format-14 not found" >&2; exit 2; }
if ! style_files | xargs -0 -r clang-format-14 --dry-run -Werror; then
  echo "check-style: format drift (above); scripts/apply-style.sh or clang-format-14 -i FILE fixes it" >&2
  exit 1
fi
echo "check-style: format clean"

if [ "${1:-}" = --naming ]; then
  build_dir=${2:-build-style}
  style_configure "$build_dir"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  style_tidy "$build_dir" "$work/tidy.log" -export-fixes "$work/findings.yaml"
  findings=$(style_findings "$work/findings.yaml" all)
  if [ -n "$findings" ]; then
    echo "$findings"
    echo "check-style: $(grep -c . <<<"$findings") naming findings; scripts/apply-style.sh fixes them" >&2
    exit 1
  fi
  echo "check-style: naming clean"
fi
