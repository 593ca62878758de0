# Checks every direction pair of the suite manifest (issue I.6): the model's
# ratio before/after latency lies in the pair's expected range (`expect.ratio`
# of the `after` case, justified in `expect.why`), and where the pair names the
# rewrite ops that make `after`, applying them to `before` gives `after`'s code.
# A compiler-effect pair names its target option (`expect.effect`, a boolean of
# lib/Perf/targets/trn1.json): with the option turned off the ratio must leave
# the range (the option decides the pair). `expect.after_gbps` bounds the HBM
# bytes per ns the after kernel moves (a DMA throughput reached).
#
# usage: pairs_direction.py ACCELOPT SRCROOT [--swap] [--estimates FILE]
#   --swap            judges each pair with before and after exchanged (must fail
#                     for every pair whose range excludes 1).
#   --estimates FILE  reads the tool's results (profiles, whether the ops give the
#                     after code) from FILE when it exists, else writes them there:
#                     the --swap judgement needs no new estimates.
import json
import os
import subprocess
import sys
import tempfile

accelopt, root = sys.argv[1], sys.argv[2]
swap = "--swap" in sys.argv[3:]
cache_path = sys.argv[sys.argv.index("--estimates") + 1] if "--estimates" in sys.argv else None
cache = {}
if cache_path and os.path.exists(cache_path):
    with open(cache_path) as f:
        cache = json.load(f)


def cached(key, compute):
    if key not in cache:
        cache[key] = compute()
    return cache[key]
with open(os.path.join(root, "nkibench", "manifest.json")) as f:
    cases = json.load(f)["cases"]
by_name = {c["name"]: c for c in cases}


def profile(name, target="trn1", effect=None):
    # `effect` names the option a custom target turns off (the cache key; the file is temporary).
    def compute():
        out = subprocess.run([accelopt, "profile", "--case", name, "--format", "json", "--target", target],
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out)
    profile = cached("profile %s %s" % (name, effect or target), compute)
    assert profile["backend"] == "sim-trn1", profile["backend"]
    return profile


def latency(name, target="trn1", effect=None):
    return profile(name, target, effect)["latency"]


def without(option, tmp):
    # trn1 with one boolean option turned off.
    with open(os.path.join(root, "lib", "Perf", "targets", "trn1.json")) as f:
        target = json.load(f)
    node = target
    for key in option.split("."):
        node = node[key]
    assert node["value"] is True, option
    node["value"] = False
    path = os.path.join(tmp, "target.json")
    with open(path, "w") as f:
        json.dump(target, f)
    return path


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
        def gives_after():
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "after.py")
                subprocess.run([accelopt, "apply", "--case", before["name"], "--quiet", "--op", json.dumps(ops), "-o", out],
                               check=True)
                return code(out) == code(os.path.join(root, "nkibench", after["kernel"]))
        same = cached("apply " + pair, gives_after)
        rewritten = ", ops %s: %s" % ("+".join(o["op"] for o in ops), "same code" if same else "DIFFERENT code")
        ok = ok and same
    effect = after["expect"].get("effect")
    if effect:
        with tempfile.TemporaryDirectory() as tmp:
            target = without(effect, tmp)
            rb, ra = latency(before["name"], target, effect), latency(after["name"], target, effect)
        if swap:
            rb, ra = ra, rb
        outside = not lo <= rb / ra <= hi
        rewritten += ", without %s: ratio %.3f, %s" % (effect, rb / ra, "outside" if outside else "INSIDE")
        ok = ok and outside
    gbps = after["expect"].get("after_gbps")
    if gbps:
        p = profile(after["name"])
        rate = (p["hbm_read_bytes"] + p["hbm_write_bytes"]) / (p["latency"] * 1e6)
        inside = gbps[0] <= rate <= gbps[1]
        rewritten += ", after moves %.0f GB/s, expected [%.0f, %.0f]" % (rate, gbps[0], gbps[1])
        ok = ok and inside
    checked += 1
    wrong += not ok
    print("pair %s: before %.4f ms, after %.4f ms, ratio %.3f, expected [%.2f, %.2f]%s: %s" %
          (pair, tb, ta, ratio, lo, hi, rewritten, "ok" if ok else "WRONG"))
# Every rewrite op (a page in rewrites/) is proven by a pair.
documented = sorted(f[:-3] for f in os.listdir(os.path.join(root, "rewrites")) if f.endswith(".md") and f != "README.md")
proven = {o["op"] for c in cases for o in c.get("expect", {}).get("ops", [])}
missing = [op for op in documented if op not in proven]
print("rewrite ops: %d, without a pair: %s" % (len(documented), ", ".join(missing) or "none"))
print("pairs: %d checked, %d wrong" % (checked, wrong))
if cache_path:
    with open(cache_path, "w") as f:
        json.dump(cache, f)
sys.exit(1 if wrong or missing else 0)
