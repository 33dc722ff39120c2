#!/usr/bin/env python3
"""How fast gnnc.nn layers run on CPU tensors (the reference evaluator, in
double precision inside) next to PyG's: forward+backward of GCNConv,
SAGEConv (mean), GATConv (4 heads), GINConv and GINEConv (a 2-layer MLP;
GINE with 4-channel edge features) on a random graph, median of REPS
steps after 3 warm-ups. The CPU path defines what the layers compute; it is
not built for speed (docs/Python.md).

    python bench/cpu_path.py [--nodes N] [--edges E] [--channels C] [--reps R]"""
import argparse
import statistics
import time

import torch
import torch_geometric.nn as pnn

import gnnc.nn

ap = argparse.ArgumentParser()
ap.add_argument("--nodes", type=int, default=20000)
ap.add_argument("--edges", type=int, default=200000)
ap.add_argument("--channels", type=int, default=64)
ap.add_argument("--reps", type=int, default=5)
args = ap.parse_args()
torch.manual_seed(0)
n, c = args.nodes, args.channels
ei = torch.randint(0, n, (2, args.edges))
x = torch.randn(n, c, requires_grad=True)
edge_attr = torch.randn(args.edges, 4)


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(c, c), torch.nn.ReLU(), torch.nn.Linear(c, c))


layers = {
    "GCNConv": lambda nn: nn.GCNConv(c, c),
    "SAGEConv": lambda nn: nn.SAGEConv(c, c),
    "GATConv": lambda nn: nn.GATConv(c, c // 4, heads=4),
    "GINConv": lambda nn: nn.GINConv(mlp(), train_eps=True),
    "GINEConv": lambda nn: nn.GINEConv(mlp(), train_eps=True, edge_dim=4),
}
print(f"{n} nodes, {args.edges} edges, {c} channels, {torch.get_num_threads()} threads; "
      f"forward+backward ms (median of {args.reps})")
for name, make in layers.items():
    ms = {}
    for lib, nn in (("gnnc", gnnc.nn), ("pyg", pnn)):
        layer = make(nn)
        times = []
        for i in range(3 + args.reps):
            t = time.perf_counter()
            extra = (edge_attr,) if name == "GINEConv" else ()
            layer(x, ei, *extra).sum().backward()
            if i >= 3:
                times.append((time.perf_counter() - t) * 1e3)
        ms[lib] = statistics.median(times)
    print(f"{name:9s} gnnc {ms['gnnc']:8.1f}  PyG {ms['pyg']:8.1f}  "
          f"gnnc / PyG {ms['gnnc'] / ms['pyg']:5.2f}x", flush=True)
