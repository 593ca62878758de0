#!/bin/bash
# apply-all.sh TOOL WORKDIR CASE...: applies every op `legal` lists for each case,
# checks that each result re-parses and verifies clean, and prints a count per case.
tool=$1; dir=$2; shift 2
mkdir -p "$dir"
for c in "$@"; do
  n=0; ok=0
  while IFS= read -r op; do
    n=$((n + 1))
    out="$dir/$c.$n.py"
    if ! "$tool" apply --case "$c" --quiet --op "$op" -o "$out"; then
      echo "FAILED apply $c $op"; continue
    fi
    if ! "$tool" check --no-source --case "$c" "$out" > "$out.check"; then
      echo "FAILED check $c $op"; cat "$out.check"; continue
    fi
    ok=$((ok + 1))
  done < <("$tool" legal --case "$c" | grep -v '^#' | sed 's/}  .*/}/')
  echo "$c: $n legal ops, $ok applied and verified clean"
done
