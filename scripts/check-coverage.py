#!/usr/bin/env python3
"""Checks that every rewrite op and every verifier rule is documented and exercised by a lit test.

    check-coverage.py ops   OPS.json   SRCROOT [--exclude FILE]   # OPS.json: `accelopt-rewrite legal --list-ops=json`
    check-coverage.py rules RULES.json SRCROOT [--exclude FILE]   # RULES.json: `accelopt-rewrite check --list-rules=json`

An op needs a non-empty summary and field docs, its page rewrites/<op>.md, and a lit test
under test/ that names it ("op": "<op>"). A rule needs a non-empty doc, its row in
README.md's rule list, and a lit test expecting a diagnostic that ends in [<rule>].
--exclude leaves a file out of the search (the test running this check, which names every op).
Prints one line per gap and exits 1 when there is any.
"""
import json
import os
import re
import sys

# Lit tests and their inputs; unit tests, benchmarks and fuzzers do not count.
SKIPPED_DIRS = {"unit", "benchmark", "fuzz"}


EXCLUDED = set()


def lit_files(srcroot):
    test_root = os.path.join(srcroot, "test")
    for dirpath, dirnames, filenames in os.walk(test_root):
        if os.path.relpath(dirpath, test_root).split(os.sep)[0] in SKIPPED_DIRS:
            continue
        for name in filenames:
            if name.endswith((".py", ".test", ".json")):
                path = os.path.join(dirpath, name)
                if os.path.realpath(path) in EXCLUDED:
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    yield path, f.read()


def check_ops(ops, srcroot):
    gaps = []
    texts = [text for _, text in lit_files(srcroot)]
    for op in ops:
        name = op["op"]
        if not op.get("summary"):
            gaps.append(f"op '{name}' has no summary")
        for field in op.get("fields", []):
            if not field.get("doc"):
                gaps.append(f"op '{name}': field '{field['name']}' has no doc")
        page = os.path.join(srcroot, "rewrites", name + ".md")
        if not os.path.isfile(page) or os.path.getsize(page) == 0:
            gaps.append(f"op '{name}' has no doc page rewrites/{name}.md")
        used = re.compile(r'"op"\s*:\s*"' + re.escape(name) + '"')
        if not any(used.search(text) for text in texts):
            gaps.append(f"op '{name}' is exercised by no lit test (no \"op\": \"{name}\" under test/)")
    return gaps


def check_rules(rules, srcroot):
    gaps = []
    texts = [text for _, text in lit_files(srcroot)]
    with open(os.path.join(srcroot, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    for rule in rules:
        rid = rule["rule"]
        if not rule.get("doc"):
            gaps.append(f"rule '{rid}' has no doc")
        if f"| `{rid}` |" not in readme:
            gaps.append(f"rule '{rid}' is missing from README.md's rule list")
        # An expected diagnostic (a FileCheck line, any prefix): "...: message [rule]".
        checked = re.compile(r"^.*: .*\[" + re.escape(rid) + r"\]\s*$", re.M)
        if not any(checked.search(text) for text in texts):
            gaps.append(f"rule '{rid}' is exercised by no lit test (no expected diagnostic ending in [{rid}] under test/)")
    return gaps


def main(argv):
    while len(argv) > 5 and argv[-2] == "--exclude":
        EXCLUDED.add(os.path.realpath(argv[-1]))
        argv = argv[:-2]
    if len(argv) != 4 or argv[1] not in ("ops", "rules"):
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[2], encoding="utf-8") as f:
        items = json.load(f)
    gaps = check_ops(items, argv[3]) if argv[1] == "ops" else check_rules(items, argv[3])
    for gap in gaps:
        print("error: " + gap)
    print(f"{len(items)} {argv[1]} checked, {len(gaps)} gap(s)")
    return 1 if gaps else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
