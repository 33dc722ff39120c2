"""One line of a gnn-run --profile-steps JSON report: the median ms and
each step's median ms."""
import json, sys
d = json.load(sys.stdin)["cuda"]
steps = " ".join("%s=%.3f" % (s["step"], s["median_ms"]) for s in d.get("step_ms", []))
print("median %.4f ms  %s" % (d["median_ms"], steps))
