# Sourced by scripts/apply-style.sh and scripts/check-style.sh (run from the checkout's root): what
# the style covers and how clang-tidy is run, declared once.

# The C++ files the style covers, NUL-separated: lib/ tools/ test/, tracked or new (not ignored).
style_files() {
  git ls-files -z --cached --others --exclude-standard -- \
    'lib/*.cpp' 'lib/*.h' 'tools/*.cpp' 'tools/*.h' 'test/*.cpp' 'test/*.h'
}

# style_configure BUILD_DIR: a build dir whose compile_commands.json clang-tidy can read: without
# precompiled headers (clang cannot load GCC's .gch). Nothing is built: the only generated sources
# (EmbeddedPrompts.cpp, EmbeddedData.cpp) are written when CMake configures.
style_configure() {
  local tool
  for tool in clang-tidy-14 run-clang-tidy-14 clang-apply-replacements-14 clang-format-14; do
    command -v "$tool" >/dev/null ||
      { echo "style: $tool not found (Debian: clang-tidy-14, clang-format-14, clang-tools-14)" >&2; exit 2; }
  done
  [ -f grammars/node_modules/tree-sitter-python/src/parser.c ] ||
    { echo "style: the tree-sitter grammar is missing; run scripts/setup.sh once" >&2; exit 2; }
  cmake -S . -B "$1" -G Ninja -DACCELOPT_PCH=OFF >/dev/null
}

# style_tidy BUILD_DIR LOG [run-clang-tidy args...]: the naming check alone over every translation
# unit of ours, ACCELOPT_STYLE_JOBS (default nproc) at a time. Findings and fixes are limited to
# files under the checkout's lib/ tools/ test/, so nothing under /usr is ever rewritten.
style_tidy() {
  local build_dir=$1 log=$2 ours="^$PWD/(lib|tools|test)/"
  shift 2
  run-clang-tidy-14 -p "$build_dir" -j "${ACCELOPT_STYLE_JOBS:-$(nproc)}" -quiet \
    -checks='-*,readability-identifier-naming' -header-filter="$ours" "$@" "$ours" >"$log" 2>&1 ||
    { cat "$log" >&2; echo "style: clang-tidy failed (above)" >&2; exit 2; }
}

# style_findings FIXES.yaml all|unfixed: the findings of an exported fixes file, one line per
# distinct location ("file:offset: message"; a header's findings come once per translation unit
# that includes it); unfixed: only those clang-tidy attached no fix to.
# style_findings FIXES.yaml summary: "N findings, fixes edit M files".
style_findings() {
  /usr/bin/python3 - "$@" <<'EOF'
import sys, yaml
path, mode = sys.argv[1], sys.argv[2]
with open(path) as f:
    doc = yaml.safe_load(f) or {}
found, edited = set(), set()
for d in doc.get('Diagnostics', []):
    msg = d.get('DiagnosticMessage', {})
    edited.update(r['FilePath'] for r in msg.get('Replacements', []))
    if mode == 'unfixed' and msg.get('Replacements'):
        continue
    found.add(f"{msg.get('FilePath')}:{msg.get('FileOffset')}: {msg.get('Message')}")
if mode == 'summary':
    print(f"{len(found)} findings, fixes edit {len(edited)} files")
elif found:
    print('\n'.join(sorted(found)))
EOF
}
