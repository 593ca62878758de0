#!/usr/bin/env python3
"""Refreshes the lists the repository's docs copy from declarations:

    rewrites/README.md  op table   <- accelopt-rewrite legal --list-ops=markdown   (lib/Rewrite/<Op>.cpp)
    README.md           rule list  <- accelopt-rewrite check --list-rules=markdown (lib/NKI/Rules.def)

Usage: update-rendered-lists.py [BINDIR]   (default build/bin). Each list sits between
"<!-- BEGIN name" and "<!-- END name" lines; test/Rewrite/catalogue.test and
test/Analysis/rule-list.test fail while a copy differs from the rendering.
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REGIONS = [
    ("rewrites/README.md", "op table", ["legal", "--list-ops=markdown"]),
    ("README.md", "rule list", ["check", "--list-rules=markdown"]),
]


def replace_region(text, name, body):
    begin, end = "<!-- BEGIN " + name, "<!-- END " + name
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith(begin)]
    ends = [i for i, line in enumerate(lines) if line.startswith(end)]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise SystemExit(f"error: expected one '{begin}' line followed by one '{end}' line")
    return "".join(lines[: starts[0] + 1]) + body + "".join(lines[ends[0]:])


def main(argv):
    bindir = argv[1] if len(argv) > 1 else os.path.join(ROOT, "build", "bin")
    tool = os.path.join(bindir, "accelopt-rewrite")
    for path, name, args in REGIONS:
        body = subprocess.run([tool] + args, check=True, capture_output=True, text=True).stdout
        full = os.path.join(ROOT, path)
        with open(full, encoding="utf-8") as f:
            old = f.read()
        new = replace_region(old, name, body)
        if new != old:
            with open(full, "w", encoding="utf-8") as f:
                f.write(new)
            print(f"updated {path} ({name})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
