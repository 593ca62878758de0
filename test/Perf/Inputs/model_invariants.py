#!/usr/bin/env python3
"""Physical invariants of the performance model's estimates (issue I.1), checked on every suite case
(our own and NKIBench's), optionally on seeded random legal op sequences applied to them:

  hbm_write_bytes >= the bytes of the kernel's outputs (every output element is written once)
  hbm_read_bytes  >= the bytes of the input tensors the kernel reads (every input element it reads
                     comes from HBM at least once)
  latency         >= (input + output bytes) / the target's peak HBM bandwidth
  latency         >= the problem's matmul FLOPs (nkibench/roofline.json) / the target's 16-bit
                     TensorE peak, for cases with a roofline problem
and, for the suite itself, no unmodelled work (issue I.2).

    model_invariants.py TOOL REPO_ROOT [--random N] [--seed S] [--filter REGEX]
    model_invariants.py TOOL REPO_ROOT --kernel FILE --inputs SPEC   (one kernel instead of the suite)

Prints one line per violation and a summary; exits 1 when something is violated.
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile

DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "int32": 4, "uint32": 4, "int16": 2,
               "uint16": 2, "int8": 1, "uint8": 1, "float8_e4m3": 1, "float8_e5m2": 1, "tfloat32": 4,
               "bool": 1, "float64": 8, "int64": 8}


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def target_peaks(root):
    with open(os.path.join(root, "lib", "Perf", "targets", "trn1.json")) as f:
        t = json.load(f)
    v = lambda *path: _value(t, path)
    tensor_flops = 2 * v("matmul", "pe_rows") * v("matmul", "pe_columns") * v("engines", "tensor", "clock_ghz") * 1e9
    hbm_bytes_per_s = v("dma", "hbm_bytes_per_ns") * 1e9
    return tensor_flops, hbm_bytes_per_s


def _value(doc, path):
    for p in path:
        doc = doc[p]
    return doc["value"]


def suite_cases(root):
    with open(os.path.join(root, "nkibench", "manifest.json")) as f:
        manifest = json.load(f)
    nkibench = os.path.join(root, manifest.get("nkibench_default_root", ""))
    out = []
    for case in manifest["cases"]:
        base = nkibench if case.get("root", "local") == "nkibench" else os.path.join(root, "nkibench")
        path = os.path.join(base, case["kernel"])
        if os.path.isfile(path):
            out.append(dict(case, path=path))
    return out


def roofline_mm_flops(root, case):
    with open(os.path.join(root, "nkibench", "roofline.json")) as f:
        roofline = json.load(f)
    problem = roofline.get("problems", {}).get(case.get("problem", ""))
    if not problem or "mm_flops" not in problem:
        return 0.0
    expr = problem["mm_flops"]
    expr = expr["expr"] if isinstance(expr, dict) else expr
    return float(eval(expr, {"__builtins__": {}}, dict(case.get("values", {}))))


def io_bytes(tool, path, inputs):
    """(bytes of the argument tensors some statement reads, bytes of the output tensors)."""
    rc, out, err = run([tool, "show", path, "--inputs", inputs, "--format", "json"])
    if rc != 0:
        raise RuntimeError(f"show failed on {path}: {err}")
    kernel = json.loads(out)["kernels"][0]
    read = {a["tensor"] for s in kernel["statements"] for a in s["reads"]}
    def size(t):
        n = 1
        for d in t["shape"]:
            n *= d
        return n * DTYPE_BYTES.get(t["dtype"], 4)
    inputs_b = sum(size(t) for t in kernel["tensors"] if t.get("argument") and t["name"] in read)
    outputs_b = sum(size(t) for t in kernel["tensors"] if t.get("output"))
    return inputs_b, outputs_b


def check(tool, label, path, inputs, in_b, out_b, mm_flops, peaks, want_no_unmodelled, problems):
    rc, out, err = run([tool, "profile", path, "--inputs", inputs, "--format", "json"])
    if rc != 0:
        return  # a rewrite may be rejected for other reasons; profiling errors are not estimates
    p = json.loads(out)
    if isinstance(p, list):
        p = p[0]
    tensor_flops, hbm_bw = peaks
    latency_s = p["latency"] * 1e-3
    bound_s = max((in_b + out_b) / hbm_bw, mm_flops / tensor_flops)
    if p["hbm_write_bytes"] < out_b:
        problems.append(f"{label}: hbm_write_bytes {p['hbm_write_bytes']} < output bytes {out_b}")
    if p["hbm_read_bytes"] < in_b:
        problems.append(f"{label}: hbm_read_bytes {p['hbm_read_bytes']} < input bytes read {in_b}")
    if latency_s < bound_s * (1 - 1e-9):
        problems.append(f"{label}: latency {p['latency']:.6f} ms < physical lower bound {bound_s * 1e3:.6f} ms")
    if want_no_unmodelled and p.get("unmodelled"):
        what = "; ".join(f"{u['stmt']} {u['what']}: {u['reason']}" for u in p["unmodelled"])
        problems.append(f"{label}: unmodelled work in a suite kernel: {what}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tool")
    ap.add_argument("root")
    ap.add_argument("--random", type=int, default=0, help="random legal op sequences to check")
    ap.add_argument("--seed", type=int, default=20261125)
    ap.add_argument("--filter", default="")
    ap.add_argument("--kernel", help="check this kernel file instead of the suite")
    ap.add_argument("--inputs", default="")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    peaks = target_peaks(args.root)
    problems = []
    checked = 0
    if args.kernel:
        cases = [{"name": os.path.basename(args.kernel), "path": args.kernel, "inputs": args.inputs}]
    else:
        cases = [c for c in suite_cases(args.root) if re.search(args.filter, c["name"])]
    facts = {}
    for c in cases:
        in_b, out_b = io_bytes(args.tool, c["path"], c["inputs"])
        mm = roofline_mm_flops(args.root, c)
        facts[c["name"]] = (in_b, out_b, mm)
        check(args.tool, c["name"], c["path"], c["inputs"], in_b, out_b, mm, peaks, not args.kernel, problems)
        checked += 1
    with tempfile.TemporaryDirectory() as tmp:
        menus = {}
        for i in range(args.random):
            c = rng.choice(cases)
            if c["name"] not in menus:
                rc, out, _ = run([args.tool, "legal", c["path"], "--inputs", c["inputs"], "--format", "json"])
                menus[c["name"]] = [o["op"] for o in json.loads(out)["ops"]] if rc == 0 else []
            menu = menus[c["name"]]
            if not menu:
                continue
            ops = [rng.choice(menu) for _ in range(rng.choice((1, 2, 3)))]
            rc, out, _ = run([args.tool, "apply", c["path"], "--inputs", c["inputs"], "--op", json.dumps(ops)])
            if rc != 0:
                continue
            rewritten = os.path.join(tmp, f"r{i}.py")
            with open(rewritten, "w") as f:
                f.write(out)
            in_b, out_b, mm = facts[c["name"]]
            label = f"{c['name']} + {json.dumps(ops)}"
            check(args.tool, label, rewritten, c["inputs"], in_b, out_b, mm, peaks, False, problems)
            checked += 1
    for p in problems:
        print("violation: " + p)
    print(f"model invariants: {checked} estimates checked, {len(problems)} violations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
