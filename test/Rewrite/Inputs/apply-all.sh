#!/bin/bash
# apply-all.sh TOOL WORKDIR CASE...: applies every op `legal` lists for each suite case,
# checks that each result re-parses and verifies clean, and prints a count per case.
# apply-all.sh --dialect nki TOOL WORKDIR FILE:INPUTS...: the same for kernels of the current
# `nki` dialect given by file and --inputs, and also: each result verifies numerically equal to
# the original (2 seeds), no line an op added uses a construct of the 0.1 dialect (LEGACY), and
# no instance an op's own check accepts is refused by the engine for its result (REJECTED: the op
# emitted code the kernel's dialect refuses, or other code that does not verify).
dialect=neuronxcc
if [ "$1" = --dialect ]; then dialect=$2; shift 2; fi
tool=$1; dir=$2; shift 2
mkdir -p "$dir"
# What the 0.1 dialect has and the nki dialect removed or spells differently: block dimensions,
# masks, arange/mgrid indices, neuronxcc imports, and an NKI call returning its result instead of
# passing its destination (allocations and the 0.3 nl.load excepted).
legacy='nl\.par_dim|nl\.arange|nl\.mgrid|neuronxcc|mask=|(=|\+=) *(nisa|nl)\.[a-z_]+\('
allowed='= *nl\.(ndarray|zeros|load)\('
for c in "$@"; do
  if [ "$dialect" = nki ]; then
    file=${c%%:*}; name=$(basename "$file" .py)
    kernel=("$file"); opts=(--inputs "${c#*:}")
  else
    file=; name=$c
    kernel=(); opts=(--case "$c")
  fi
  n=0; ok=0; outs=(); applied_ops=()
  while IFS= read -r op; do
    n=$((n + 1))
    out="$dir/$name.$n.py"
    if ! "$tool" apply "${kernel[@]}" "${opts[@]}" --quiet --op "$op" -o "$out"; then
      echo "FAILED apply $name $op"; continue
    fi
    outs+=("$out"); applied_ops+=("$op")
  done < <("$tool" legal "${kernel[@]}" "${opts[@]}" | grep -v '^#' | sed 's/}  .*/}/')
  # One check over all results (a summary line per file; a file without "0 errors" failed).
  if ((${#outs[@]})); then "$tool" check --no-source "${opts[@]}" "${outs[@]}" > "$dir/$name.check" 2>&1; fi
  for i in "${!outs[@]}"; do
    out=${outs[$i]}; op=${applied_ops[$i]}
    if ! grep -qF "$out: 1 kernel, 0 errors, " "$dir/$name.check"; then
      echo "FAILED check $name $op"; grep -F "$out:" "$dir/$name.check"; continue
    fi
    if [ "$dialect" = nki ]; then
      added=$(diff "$file" "$out" | grep '^>' | grep -E "$legacy" | grep -vE "$allowed")
      if [ -n "$added" ]; then echo "LEGACY $name $op"; echo "$added"; continue; fi
      if ! "$tool" verify "$file" "$out" "${opts[@]}" --seeds 2 > "$out.verify"; then
        echo "FAILED verify $name $op"; cat "$out.verify"; continue
      fi
    fi
    ok=$((ok + 1))
  done
  if [ "$dialect" = nki ]; then
    "$tool" legal --rejected "${kernel[@]}" "${opts[@]}" | grep -v '^#' | sed "s/^/REJECTED $name /"
    echo "$name: $n legal ops, $ok applied, verified clean and equal"
  else
    echo "$c: $n legal ops, $ok applied and verified clean"
  fi
done
