"""Reads a Chrome trace-event file written by `profile --timeline` and prints its structure; fails
on a malformed event or on two overlapping events of one track."""
import json
import sys

doc = json.load(open(sys.argv[1]))
events = doc["traceEvents"]
meta = [e for e in events if e["ph"] == "M"]
spans = [e for e in events if e["ph"] == "X"]
for e in meta:
    if e["name"] == "process_name":
        print("process:", e["args"]["name"])
    else:
        print(f"track {e['tid']}: {e['args']['name']}")
tracks = {e["tid"] for e in meta if e["name"] == "thread_name"}
by_track = {}
for e in spans:
    for key in ("name", "ts", "dur", "pid", "tid", "args"):
        assert key in e, f"event without {key}: {e}"
    assert e["tid"] in tracks, f"event on an unnamed track: {e}"
    assert e["dur"] >= 0
    a = e["args"]
    print(f"event {e['name']} line {a.get('line')} instruction {a.get('instruction')}")
    by_track.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
for tid, ivs in by_track.items():
    ivs.sort()
    for (s0, e0), (s1, e1) in zip(ivs, ivs[1:]):
        assert s1 >= e0 - 1e-9, f"overlap on track {tid}: [{s0}, {e0}) and [{s1}, {e1})"
last = max(ts + d for ts, d in ((e["ts"], e["dur"]) for e in spans))
makespan_us = doc["otherData"]["makespan_ns"] * 1e-3
assert abs(last - makespan_us) < 1e-6 * max(1.0, makespan_us), (last, makespan_us)
print(f"{len(spans)} events, none overlapping on a track, last end {last:.4f} us = makespan")
