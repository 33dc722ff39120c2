#!/usr/bin/env python3
"""Reads a memory plan written by `gnn-run --dump-memory-plan` and prints what
a lit test checks: whether it is valid (aligned offsets, arena temps inside
the arena, no two temps that are live at one step share a byte of the arena
or of the output holding them), whether the arena is at most the lower bound
of one holding every temp, and which temps share memory."""
import json
import sys

plan = json.load(open(sys.argv[1]))
temps = [t for t in plan["temps"] if t["offset"] is not None and t["bytes"] > 0]
align = plan["alignment"]
ok = plan["arena_bytes"] % align == 0
shared = []
for i, a in enumerate(temps):
    ok &= a["offset"] % align == 0
    if a["in"] == "arena":
        ok &= a["offset"] + a["bytes"] <= plan["arena_bytes"]
    for b in temps[:i]:
        live_together = not (a["last_step"] < b["first_step"] or b["last_step"] < a["first_step"])
        overlap = a["in"] == b["in"] and a["offset"] < b["offset"] + b["bytes"] and \
            b["offset"] < a["offset"] + a["bytes"]
        if live_together and overlap:
            ok = False
            print(f"conflict: {b['name']} and {a['name']}")
        if overlap:
            shared.append((b["name"], a["name"]))
print("valid:", "yes" if ok else "no")
print("at most the lower bound:", "yes" if plan["arena_bytes"] <= plan["max_live_bytes"] else "no")
print("temps in outputs:", sum(t["in"] != "arena" for t in temps))
print("temps:", len(temps))
print("pairs sharing memory:", len(shared))
print(f"unplanned / arena: {plan['unplanned_bytes'] / max(plan['arena_bytes'], 1):.1f}")
