#!/usr/bin/env python3
"""Seeded fingerprint of `legal` -> `apply` over the suite, for refactorings that must not change
behaviour: every legal single op of every suite kernel, plus seeded random two- and three-op
candidates drawn from the same menus, each applied by the CLI. Every call's exit code, stdout and
stderr (kernel paths replaced by the file's name) is hashed; the combined hash must stay the same.

    scripts/apply-fingerprint.py BINDIR [--calls N] [--seed S] [--details FILE] [-j N] [--exclude-ops OP,OP]
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import random
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def suite_kernels():
    """(path, inputs) for every manifest case whose kernel file exists."""
    with open(os.path.join(ROOT, "nkibench", "manifest.json")) as f:
        manifest = json.load(f)
    nkibench = os.environ.get("ACCELOPT_NKIBENCH") or os.path.join(ROOT, manifest.get("nkibench_default_root", ""))
    out = []
    for case in manifest["cases"]:
        base = nkibench if case.get("root", "local") == "nkibench" else os.path.join(ROOT, "nkibench")
        for candidate in (os.path.join(base, case["kernel"]), os.path.join(ROOT, "nkibench", case["kernel"]),
                          os.path.join(ROOT, case["kernel"])):
            if os.path.isfile(candidate):
                out.append((os.path.normpath(candidate), case.get("inputs", "")))
                break
    return sorted(set(out))


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def normalise(text, path):
    return text.replace(path.encode(), os.path.basename(path).encode())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bindir")
    ap.add_argument("--calls", type=int, default=5000, help="at least this many apply calls")
    ap.add_argument("--seed", type=int, default=20261124)
    ap.add_argument("--details", help="write one line per call (kernel, ops, hash) here")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--exclude-ops", default="", help="comma-separated op names left out of the menus (compare with a build without them)")
    args = ap.parse_args()
    tool = os.path.join(args.bindir, "accelopt-rewrite")
    rng = random.Random(args.seed)

    kernels = suite_kernels()
    menus = {}
    for path, inputs in kernels:
        rc, out, err = run([tool, "legal", path, "--inputs", inputs, "--format", "json"])
        if rc != 0:
            print(f"legal failed on {path}: {err.decode(errors='replace')}", file=sys.stderr)
            menus[path] = []
            continue
        menus[path] = [o["op"] for o in json.loads(out)["ops"] if o["op"]["op"] not in args.exclude_ops.split(",")]

    jobs = []  # (path, inputs, ops)
    for path, inputs in kernels:
        for op in menus[path]:
            jobs.append((path, inputs, [op]))
    with_ops = [(p, i) for p, i in kernels if menus[p]]
    while len(jobs) < args.calls and with_ops:
        path, inputs = rng.choice(with_ops)
        k = rng.choice((2, 2, 3))
        jobs.append((path, inputs, [rng.choice(menus[path]) for _ in range(k)]))

    def apply(job):
        path, inputs, ops = job
        rc, out, err = run([tool, "apply", path, "--inputs", inputs, "--op", json.dumps(ops, sort_keys=True)])
        h = hashlib.sha256()
        h.update(str(rc).encode() + b"\0" + normalise(out, path) + b"\0" + normalise(err, path))
        return h.hexdigest()

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.j) as pool:
        hashes = list(pool.map(apply, jobs))

    total = hashlib.sha256()
    lines = []
    for (path, _, ops), h in zip(jobs, hashes):
        line = f"{os.path.basename(path)} {json.dumps(ops, sort_keys=True)} {h}"
        lines.append(line)
        total.update(line.encode() + b"\n")
    if args.details:
        with open(args.details, "w") as f:
            f.write("\n".join(lines) + "\n")
    print(f"apply-fingerprint: {len(jobs)} apply calls over {len(kernels)} kernels, seed {args.seed}: "
          f"{total.hexdigest()}")


if __name__ == "__main__":
    main()
