#!/usr/bin/env bash
# Applies the tree's style in place: the naming of .clang-tidy (readability-identifier-naming alone,
# fixed by clang-tidy-14 through clang-apply-replacements-14) over every lib/ tools/ test/ translation
# unit, then .clang-format (clang-format-14 -i) over every C++ file there. Prints the naming findings
# left and exits 1 when there are any.
#
#   scripts/apply-style.sh [BUILD_DIR] [--verify]
#
# BUILD_DIR (default build-style) is configured without precompiled headers (scripts/style-lib.sh).
# Left findings are those clang-tidy could not fix; --verify instead runs clang-tidy over every
# translation unit a second time (twice the time). ACCELOPT_STYLE_JOBS: parallel clang-tidy runs.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/style-lib.sh

build_dir=build-style
verify=0
for arg in "$@"; do
  case $arg in
    --verify) verify=1 ;;
    -*) echo "apply-style: unknown option $arg" >&2; exit 2 ;;
    *) build_dir=$arg ;;
  esac
done

start=$SECONDS
style_configure "$build_dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

style_tidy "$build_dir" "$work/tidy.log" -fix -export-fixes "$work/fixes.yaml"
# clang-apply-replacements skips a file whose fixes overlap (two names renamed onto one place);
# run-clang-tidy ignores its exit status, so its messages are read instead.
if grep -E "^(Fix conflicts|The new replacement|Error |Failed)" "$work/tidy.log" >&2; then
  echo "apply-style: clang-apply-replacements could not apply every fix (above)" >&2
  exit 1
fi
echo "apply-style: naming: $(style_findings "$work/fixes.yaml" summary) ($((SECONDS - start)) s)"

style_files | xargs -0 -r clang-format-14 -i
echo "apply-style: formatted ($((SECONDS - start)) s)"

if ((verify)); then
  style_tidy "$build_dir" "$work/tidy.log" -export-fixes "$work/left.yaml"
  left=$(style_findings "$work/left.yaml" all)
else
  left=$(style_findings "$work/fixes.yaml" unfixed)
fi
echo "apply-style: $(grep -c . <<<"$left" || true) naming findings left ($((SECONDS - start)) s)"
if [ -n "$left" ]; then
  echo "$left"
  exit 1
fi
