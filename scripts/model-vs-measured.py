#!/usr/bin/env python3
"""The fields of a profile the model predicts from a kernel's code (HBM bytes, spills, transposes),
model vs trn1 hardware, for the NKIBench baselines and next to the profile of the best kernel of
AccelOpt's run 11110904 (issue I.5). Writes a markdown table.

usage: model-vs-measured.py BINDIR MEASURED_DIR [-o OUT.md]
  MEASURED_DIR holds trn1_baselines.json and accelopt-run-11110904/best_plan_id.csv.
Also estimates each baseline with the target's compiler hoisting loop-invariant loads
(scheduler.hoist_invariant_loads, on in trn1.json) switched off, in a copy of the trn1 target file.
"""
import argparse
import csv
import json
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIELDS = [("hbm_read_bytes", 1e6, "HBM read MB"), ("hbm_write_bytes", 1e6, "HBM write MB"),
          ("spill_save_bytes", 1e6, "spill save MB"), ("transpose_flops", 1e9, "transpose GFLOP")]


def profile(bindir, case, target):
    out = subprocess.run([os.path.join(bindir, "accelopt-rewrite"), "profile", "--case", case, "--target", target,
                          "--format", "json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bindir")
    ap.add_argument("measured")
    ap.add_argument("-o", "--out")
    args = ap.parse_args()
    baselines = json.load(open(os.path.join(args.measured, "trn1_baselines.json")))
    best = {}
    with open(os.path.join(args.measured, "accelopt-run-11110904", "best_plan_id.csv")) as f:
        for row in csv.DictReader(f):
            best[row["case_name"]] = (json.loads(row["kernel_metadata"]), float(row["best_speedup"]))
    target = json.load(open(os.path.join(ROOT, "lib", "Perf", "targets", "trn1.json")))
    target["scheduler"]["hoist_invariant_loads"] = {"value": False, "why": "model-vs-measured.py"}
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        reloading = os.path.join(tmp, "trn1-no-hoist.json")
        with open(reloading, "w") as f:
            json.dump(target, f)
        lines.append("| case | field | measured baseline | model | model, loads not hoisted | AccelOpt best measured |")
        lines.append("|---|---|---:|---:|---:|---:|")
        for b in baselines:
            case = b["case_name"]
            measured = b["measured_trn1"]
            model = profile(args.bindir, case, "trn1")
            reloaded = profile(args.bindir, case, reloading)
            run, speedup = best.get(case, ({}, None))
            for key, scale, label in FIELDS + [("latency", 1, "latency ms")]:
                def cell(d):
                    return ("%.3f" if key == "latency" else "%.1f") % (d[key] / scale) if key in d else "-"
                name = case if key == "hbm_read_bytes" else ""
                extra = " (%.2fx)" % speedup if key == "latency" and speedup else ""
                lines.append("| %s | %s | %s | %s | %s | %s%s |" % (name, label, cell(measured), cell(model),
                                                                   cell(reloaded), cell(run), extra))
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        print(text, end="")


main()
