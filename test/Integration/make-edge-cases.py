#!/usr/bin/env python3
"""Writes the edge-case graphs the GPU checks use (edge-list files for gnn-run):
empty (10 nodes, no edge), star (a hub with 200,049 incoming edges including 49
duplicates, two self-loops, plus 4,999 random edges) and twoheavy (three
adjacent heavy rows of 2,997 to 4,397 edges, so split chunks hold the ends of
one heavy row and the start of the next).
usage: make-edge-cases.py OUT_DIR"""
import os
import random
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
random.seed(1)
with open(os.path.join(out, "empty.edges"), "w") as f:
    f.write("# nodes 10\n")
with open(os.path.join(out, "star.edges"), "w") as f:
    f.write("# nodes 200001\n")
    for u in range(1, 200001):
        f.write(f"{u} 0\n")
    for u in range(1, 50):
        f.write(f"{u} 0\n")
    f.write("0 0\n0 0\n")
    for u in range(1, 5000):
        f.write(f"{u} {random.randint(1, 200000)}\n")
with open(os.path.join(out, "twoheavy.edges"), "w") as f:
    f.write("# nodes 8000\n")
    for v in (0, 1, 2):
        for u in range(3, 3000 + v * 700):
            f.write(f"{u} {v}\n")
    for u in range(3, 8000):
        f.write(f"{u} {random.randint(3, 7999)}\n")
