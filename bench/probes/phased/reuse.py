#!/usr/bin/env python3
"""How many of a graph's gathers a block of R consecutive destination rows
could share (bench/probes/phased/: issue 29's f32 SpMM on reddit-like).

For R in a few sizes: the edges' distinct (block, source) pairs over the
edges (1.0: no source repeats inside any block; the lower, the fewer source
rows such a block needs to read), and the share of the edges in rows above
a few in-degrees (the rows a split kernel would take instead). For phases
of T source ids (a tile of T sources in shared memory, README's last
section): the (row, phase) pairs that hold an edge, the mean edges of such
a pair, and the most edges in one pair among rows of at most 4,096 edges
(whether a per-row, per-phase count fits a byte).

    python bench/probes/phased/reuse.py PEERS_DIR [GRAPH] [DATASETS]
(PEERS_DIR: ../shared/bench/peers; GRAPH: a graphs.py name, default
reddit-like; runs on the CPU, about 2 minutes and 10 GB for reddit-like)."""
import sys

import torch

sys.path.insert(0, sys.argv[1])
import graphs  # noqa: E402

name = sys.argv[2] if len(sys.argv) > 2 else "reddit-like"
ei, n = graphs.load(name, sys.argv[3] if len(sys.argv) > 3 else None, device="cpu")
src, dst = ei[0].long(), ei[1].long()
e = src.numel()
print(f"{name}: {n} nodes, {e} edges, mean in-degree {e / n:.1f}")
for rows in (64, 128, 256, 512, 1024, 4096):
    pairs = torch.unique((dst // rows) * n + src).numel()
    print(f"  blocks of {rows:5d} rows: distinct (block, source) / edges = {pairs / e:.3f}")
deg = torch.bincount(dst, minlength=n)
for h in (1024, 2048, 4096, 8192):
    heavy = deg > h
    print(f"  rows above {h:5d} edges: {int(heavy.sum())} rows, {float(deg[heavy].sum()) / e:.3f} of the edges")
light = deg[dst] <= 4096
for t in (512, 1024, 2048):
    phases = (n + t - 1) // t
    key = dst * phases + src // t
    counts = torch.bincount(key[light], minlength=n * phases)
    used = int((counts > 0).sum())
    print(f"  phases of {t:4d} ids ({phases} phases): (row, phase) pairs with an edge "
          f"{used / (n * phases):.3f} of all, {int(light.sum()) / used:.2f} edges each, "
          f"at most {int(counts.max())} (light rows)")
