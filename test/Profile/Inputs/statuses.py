# Summarises a report's candidates.json for the neuron optimize tests: how many
# candidates were numerically checked and their verdicts, then the first error.
import json
import sys

candidates = json.load(open(sys.argv[1]))[1:]
checked = [c for c in candidates if c["status"] in ("correct", "incorrect")]
print("checked %d, correct %d, incorrect %d" % (len(checked), sum(c["status"] == "correct" for c in checked),
                                               sum(c["status"] == "incorrect" for c in checked)))
for c in checked:
    if c["status"] == "incorrect":
        print("incorrect: " + c["error"])
        break
