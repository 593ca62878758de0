# Prints the duration of every nc_matmul of each timeline (Chrome trace-event JSON) given.
import json
import sys

for path in sys.argv[1:]:
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    for e in events:
        if e.get("ph") == "X" and e["name"].startswith("nc_matmul"):
            print("%s %.3f us" % (e["name"], e["dur"]))  # trace-event times are in us
