# Checks every direction pair of the suite manifest (issue I.6): the model's
# ratio before/after latency lies in the pair's expected range (`expect.ratio`
# of the `after` case, justified in `expect.why`), and where the pair names the
# rewrite ops that make `after`, applying them to `before` gives `after`'s code.
#
# usage: pairs_direction.py ACCELOPT SRCROOT [--swap]
#   --swap  judges each pair with before and after exchanged (must fail for
#           every pair whose range excludes 1).
import json
import os
import subprocess
import sys
import tempfile

accelopt, root = sys.argv[1], sys.argv[2]
swap = "--swap" in sys.argv[3:]
with open(os.path.join(root, "nkibench", "manifest.json")) as f:
    cases = json.load(f)["cases"]
by_name = {c["name"]: c for c in cases}


def latency(name):
    out = subprocess.run([accelopt, "profile", "--case", name, "--format", "json"], check=True,
                         capture_output=True, text=True).stdout
    profile = json.loads(out)
    assert profile["backend"] == "sim-trn1", profile["backend"]
    return profile["latency"]


def code(path):
    # The kernel without its leading comment block (the header says before/after).
    lines = open(path).read().splitlines()
    while lines and (lines[0].startswith("#") or not lines[0].strip()):
        lines.pop(0)
    return "\n".join(lines)


checked = wrong = 0
for after in cases:
    if after.get("variant") != "after" or "expect" not in after:
        continue
    pair = after["pair"]
    before = by_name[pair + "_before"]
    lo, hi = after["expect"]["ratio"]
    tb, ta = latency(before["name"]), latency(after["name"])
    if swap:
        tb, ta = ta, tb
    ratio = tb / ta
    ok = lo <= ratio <= hi
    ops = after["expect"].get("ops")
    rewritten = ""
    if ops:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "after.py")
            subprocess.run([accelopt, "apply", "--case", before["name"], "--quiet", "--op", json.dumps(ops), "-o", out],
                           check=True)
            same = code(out) == code(os.path.join(root, "nkibench", after["kernel"]))
        rewritten = ", ops %s: %s" % ("+".join(o["op"] for o in ops), "same code" if same else "DIFFERENT code")
        ok = ok and same
    checked += 1
    wrong += not ok
    print("pair %s: before %.4f ms, after %.4f ms, ratio %.3f, expected [%.2f, %.2f]%s: %s" %
          (pair, tb, ta, ratio, lo, hi, rewritten, "ok" if ok else "WRONG"))
print("pairs: %d checked, %d wrong" % (checked, wrong))
sys.exit(1 if wrong else 0)
