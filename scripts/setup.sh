#!/usr/bin/env bash
# Installs what is missing on a Debian 12 machine (packages, the pinned
# tree-sitter grammar), then configures and builds accelopt in build/.
# Idempotent: a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ ccache pkg-config clang-14 llvm-14-dev libclang-14-dev clang-tools-14
          clang-format-14 clang-tidy-14 llvm-14-tools libclang-rt-14-dev libtree-sitter-dev nlohmann-json3-dev libcurl4-openssl-dev
          libsqlite3-dev libgtest-dev libgmock-dev libbenchmark-dev libopenblas-dev python3-numpy neovim
          munge slurmctld slurmd slurm-client)
command -v npm >/dev/null 2>&1 || packages+=(npm)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The Python grammar, pinned by grammars/package-lock.json (ABI 14 for tree-sitter 0.20.7).
if [ ! -f grammars/node_modules/tree-sitter-python/src/parser.c ] ||
   [ grammars/package-lock.json -nt grammars/node_modules/.package-lock.json ]; then
  (cd grammars && npm ci --ignore-scripts --legacy-peer-deps --no-audit --no-fund --loglevel=error)
fi

build_dir=${ACCELOPT_BUILD_DIR:-build}
# -g1 (function names and line tables: backtraces keep file:line) compiles about a third faster than -g.
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
  ${ACCELOPT_CMAKE_ARGS:-} >/dev/null
# ACCELOPT_TARGETS: build only these (README command 1 needs only the CLI); default: everything.
targets=()
for t in ${ACCELOPT_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
