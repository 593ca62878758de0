#!/usr/bin/env python3
# Judges the performance model on published hardware measurements (issue 13,
# item 6): every step of every series is profiled at its published shapes, and
# per series the predicted order of the steps is compared with the measured one
# (pairwise agreement, Kendall tau) and each step-to-step ratio with the
# measured ratio. Nothing is fitted: the file's numbers are only compared.
#
# usage: published-judge.py ACCELOPT --published FILE.json --kernels DIR
#                           [--series NAME]... [--format text|json] [--tie PCT]
#   FILE.json  nkibench/published/measurements.json's format: `sources` (each with
#              its `device`) and `series`, each with `file` (relative to DIR),
#              `inputs` (may hold {NAME} placeholders filled from a step's
#              `params`) and `steps` ({label, kernel, latency_ms[, inputs][, params]}).
#   --tie PCT  measured latencies within PCT % of each other are a tie: such a
#              pair has no order to get wrong (default 3).
# A device without a target of its own (lib/Perf/targets/DEVICE.json) is judged
# on order only and says so. Exit 1 on bad input or a step that fails to profile.
import argparse
import json
import os
import statistics
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("accelopt")
ap.add_argument("--published", required=True)
ap.add_argument("--kernels", required=True)
ap.add_argument("--series", action="append", default=[])
ap.add_argument("--format", choices=["text", "json"], default="text")
ap.add_argument("--tie", type=float, default=3.0)
args = ap.parse_args()
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fail(where, msg):
    print("%s: error: %s" % (where, msg), file=sys.stderr)
    sys.exit(1)


try:
    with open(args.published) as f:
        doc = json.load(f)
except (OSError, ValueError) as e:
    fail(args.published, "cannot read measurements: %s" % e)
if not isinstance(doc, dict) or not isinstance(doc.get("series"), list):
    fail(args.published, "expected an object with a 'series' list")
sources = doc.get("sources", {})


def field(obj, key, kind, where):
    value = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(value, kind) or isinstance(value, bool):
        fail(args.published, "%s: '%s' missing or not a %s" % (where, key, kind.__name__ if not isinstance(kind, tuple) else "number"))
    return value


def profile(path, kernel, inputs, target):
    cmd = [args.accelopt, "profile", path, "--kernel", kernel, "--format", "json"]
    if inputs:
        cmd += ["--inputs", inputs]
    if target:
        cmd += ["--target", target]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        return None, run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "exit %d" % run.returncode
    try:
        return json.loads(run.stdout), None
    except ValueError:
        return None, "profile printed no JSON"


def kendall(pred, meas, tie):
    # Pairs whose measured latencies differ by more than `tie` %: concordant when the
    # model orders them the same way.
    agree = total = ties = 0
    for i in range(len(meas)):
        for j in range(i + 1, len(meas)):
            lo, hi = sorted((meas[i], meas[j]))
            if hi <= lo * (1 + tie / 100):
                ties += 1
                continue
            total += 1
            agree += (pred[i] - pred[j]) * (meas[i] - meas[j]) > 0
    tau = (2 * agree - total) / total if total else None
    return agree, total, ties, tau


results = []
ratio_errors = []
bad = 0
for s in doc["series"]:
    name = field(s, "name", str, "series")
    if args.series and name not in args.series:
        continue
    where = "series '%s'" % name
    source = sources.get(s.get("source"), {})
    device = s.get("device", source.get("device", "trn1"))
    has_target = os.path.exists(os.path.join(root, "lib", "Perf", "targets", device + ".json"))
    path = os.path.join(args.kernels, field(s, "file", str, where))
    if not os.path.exists(path):
        fail(args.published, "%s: kernel file '%s' not found" % (where, path))
    steps = field(s, "steps", list, where)
    if len(steps) < 2:
        fail(args.published, "%s: needs at least two steps" % where)
    rows = []
    for st in steps:
        label = field(st, "label", str, where + " step")
        swhere = "%s step '%s'" % (where, label)
        measured = field(st, "latency_ms", (int, float), swhere)
        inputs = st.get("inputs", s.get("inputs", ""))
        try:
            inputs = inputs.format(**st.get("params", {}))
        except (KeyError, IndexError, ValueError) as e:
            fail(args.published, "%s: inputs placeholder %s has no value in 'params'" % (swhere, e))
        prof, err = profile(path, field(st, "kernel", str, swhere), inputs, device if has_target else None)
        if prof is None:
            bad += 1
            rows.append({"label": label, "measured_ms": measured, "error": err})
            continue
        rows.append({"label": label, "measured_ms": measured, "predicted_ms": prof["latency"], "backend": prof["backend"],
                     "error_percent": 100 * (prof["latency"] / measured - 1)})
    ok = [r for r in rows if "predicted_ms" in r]
    agree, total, ties, tau = kendall([r["predicted_ms"] for r in ok], [r["measured_ms"] for r in ok], args.tie)
    ratios = []
    for a, b in zip(ok, ok[1:]):
        m, p = a["measured_ms"] / b["measured_ms"], a["predicted_ms"] / b["predicted_ms"]
        entry = {"from": a["label"], "to": b["label"], "measured": m, "predicted": p}
        if has_target:
            entry["error_percent"] = 100 * (p / m - 1)
            ratio_errors.append(abs(entry["error_percent"]))
        ratios.append(entry)
    results.append({"series": name, "device": device, "target": device if has_target else "trn1 (order only: no %s target)" % device,
                    "steps": rows, "order_agree": agree, "order_pairs": total, "order_ties": ties, "kendall_tau": tau,
                    "ratios": ratios})

if args.format == "json":
    print(json.dumps({"series": results, "ratio_abs_error_median_percent": statistics.median(ratio_errors) if ratio_errors else None,
                      "ratio_abs_error_max_percent": max(ratio_errors) if ratio_errors else None, "failed_steps": bad}, indent=1))
else:
    agree_all = sum(r["order_agree"] for r in results)
    pairs_all = sum(r["order_pairs"] for r in results)
    for r in results:
        backends = sorted({x["backend"] for x in r["steps"] if "backend" in x})
        print("series %s (measured on %s, model backend: %s%s)" %
              (r["series"], r["device"], ", ".join(backends) or "none",
               "" if r["target"] == r["device"] else "; no %s target: order only" % r["device"]))
        for x in r["steps"]:
            if "error" in x:
                print("  %-16s measured %10.4f ms  predicted: FAILED (%s)" % (x["label"], x["measured_ms"], x["error"]))
            else:
                print("  %-16s measured %10.4f ms  predicted %10.4f ms  error %+7.1f %%" %
                      (x["label"], x["measured_ms"], x["predicted_ms"], x["error_percent"]))
        for x in r["ratios"]:
            err = " error %+7.1f %%" % x["error_percent"] if "error_percent" in x else " (order only)"
            print("  ratio %s/%s: measured %.3f, predicted %.3f%s" % (x["from"], x["to"], x["measured"], x["predicted"], err))
        tau = "n/a" if r["kendall_tau"] is None else "%.2f" % r["kendall_tau"]
        print("  order: %d/%d pairs agree (%d ties), Kendall tau %s" % (r["order_agree"], r["order_pairs"], r["order_ties"], tau))
    if ratio_errors:
        print("ratios: %d, |error| median %.1f %%, max %.1f %%" % (len(ratio_errors), statistics.median(ratio_errors), max(ratio_errors)))
    print("order: %d/%d pairs agree over %d series; failed steps: %d" % (agree_all, pairs_all, len(results), bad))
sys.exit(1 if bad else 0)
