#!/usr/bin/env python3
"""Two runs of each gnnc.nn layer's forward and backward give bitwise-equal
outputs and gradients (issue 10's reproducibility check).

For each layer (GAT, GATv2, Transformer, AGNN with 4 heads where they take
heads; SAGE max; GCN) on each graph (default cora and musae-github, whose
hub rows take the heavy-row split), the layer runs forward and backward
twice from the same input, output gradient and weights; the outputs, the
input gradient and every parameter gradient must be equal bit for bit
(torch.equal). SAGE max is the exception, by design: its aggregation's
input gradient adds each node's gradient into its winning neighbour's row
atomically (gnn.extremum_grad), in the hardware's order, so its outputs
must be equal bit for bit and its gradients within 1e-5 of each tensor's
largest magnitude (the check says which it made, and prints the largest
difference). Prints a line per layer and graph and ends with
"N passed, N failed"; exits non-zero on a failure. Needs the GPU machine:

    PYTHONPATH=<gnnc package> python3 bench/bitwise_repeat.py --datasets DIR
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test", "PyG"))
import gnnc.nn as gnn  # noqa: E402
from check_pyg_parity import load_edges  # noqa: E402

F = 64


def layers():
    """Name -> (constructor, whether its gradients sum atomically)."""
    return {
        "gat": (lambda: gnn.GATConv(F, 32, heads=4), False),
        "gatv2": (lambda: gnn.GATv2Conv(F, 32, heads=4), False),
        "transformer": (lambda: gnn.TransformerConv(F, 32, heads=4), False),
        "agnn": (lambda: gnn.AGNNConv(), False),
        "sage_max": (lambda: gnn.SAGEConv(F, F, aggr="max"), True),
        "gcn": (lambda: gnn.GCNConv(F, F), False),
    }


def run(layer, x, edge_index, gout):
    x = x.detach().clone().requires_grad_(True)
    for p in layer.parameters():
        p.grad = None
    out = layer(x, edge_index)
    out.backward(gout)
    return [out.detach().clone(), x.grad.clone()] + [
        p.grad.clone() for p in layer.parameters() if p.grad is not None]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", required=True)
    ap.add_argument("--graphs", default="cora,musae-github")
    args = ap.parse_args()
    passed = failed = 0
    for g in args.graphs.split(","):
        edge_index = load_edges(os.path.join(args.datasets, g)).cuda()
        n = int(edge_index.max()) + 1
        torch.manual_seed(0)
        x = torch.randn(n, F, device="cuda")
        for name, (make, atomic) in layers().items():
            torch.manual_seed(1)
            layer = make().cuda()
            out = layer(x, edge_index)
            gout = torch.randn_like(out)
            first = run(layer, x, edge_index, gout)
            second = run(layer, x, edge_index, gout)
            same = len(first) == len(second) and torch.equal(first[0],
                                                             second[0])
            worst = 0.0
            for a, b in zip(first[1:], second[1:]):
                if not atomic:
                    same = same and torch.equal(a, b)
                    continue
                scale = float(a.abs().max()) if a.numel() else 0.0
                diff = float((a - b).abs().max()) if a.numel() else 0.0
                worst = max(worst, diff / scale if scale else diff)
                same = same and diff <= 1e-5 * scale
            passed += same
            failed += not same
            how = (f"output bitwise, gradients within 1e-5 of max: "
                   f"{worst:.1e}" if atomic else "bitwise")
            print(f"{g:14s} {name:12s} {len(first)} tensors ({how}) "
                  f"{'PASS' if same else 'FAIL'}", flush=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
