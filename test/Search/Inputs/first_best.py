"""Compares two optimize reports: same best speedup, and how many candidates
each evaluated before first reaching its best latency."""
import json
import sys


def first_best(report_dir):
    report = json.load(open(report_dir + "/report.json"))
    cands = json.load(open(report_dir + "/candidates.json"))
    best = report["best"]["latency"]
    ids = [c["id"] for c in cands if c["status"] == "correct" and c["latency_ms"] is not None
           and abs(c["latency_ms"] - best) < 1e-12 * max(1.0, best)]
    return report["speedup"], min(ids)


(sa, fa), (sb, fb) = first_best(sys.argv[1]), first_best(sys.argv[2])
print("alone: speedup %.4f first best at candidate %d; with memory: speedup %.4f first best at candidate %d"
      % (sa, fa, sb, fb))
print("same speedup %s, fewer evaluations %s" % (abs(sa - sb) < 1e-9, fb < fa))
