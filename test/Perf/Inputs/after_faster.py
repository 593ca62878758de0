# Compares the estimated latencies of two `accelopt-rewrite profile --format
# json` outputs: prints both and whether the second (after) is faster.
import json
import sys

with open(sys.argv[1]) as f:
    before = json.load(f)
with open(sys.argv[2]) as f:
    after = json.load(f)
print("backend:", before["backend"], after["backend"])
print("before: %.6f ms" % before["latency"])
print("after: %.6f ms" % after["latency"])
print("after faster:", after["latency"] < before["latency"])
