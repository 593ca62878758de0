#!/bin/sh
# Builds the kernel tree the batch tests run on, in $1 from the sources in $2:
#   copies of suite kernels (the manifest finds their inputs by file name),
#   sub/projection.py   a copy with a renamed parameter (no inputs known),
#   old/, *_old.py      copies that .gitignore excludes,
#   .hidden/            a copy in a hidden directory,
#   broken.py           a kernel with a syntax error,
#   plain.py            Python without a kernel.
set -e
out=$1
src=$2
rm -rf "$out"
mkdir -p "$out/sub" "$out/old" "$out/.hidden"
cp "$src/nkibench/pairs/hoist_load_before.py" "$src/nkibench/pairs/affine_loop_before.py" \
   "$src/nkibench/kernels/silu_M256_N2048.py" "$src/nkibench/kernels/matmul_K512_M256_N1024.py" "$out/"
sed -e 's/\bw\b/weights/g' "$src/nkibench/pairs/hoist_load_before.py" > "$out/sub/projection.py"
cp "$src/nkibench/pairs/hoist_load_before.py" "$out/old/hoist_copy.py"
cp "$src/nkibench/pairs/hoist_load_before.py" "$out/hoist_load_old.py"
cp "$src/nkibench/pairs/hoist_load_before.py" "$out/.hidden/hoist_hidden.py"
printf '# copies kept for reference\n*_old.py\nold/\n' > "$out/.gitignore"
printf 'import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n  for i in nl.affine_range(4)\n    y = nl.load(x)\n' > "$out/broken.py"
printf 'print("no kernel here")\n' > "$out/plain.py"
