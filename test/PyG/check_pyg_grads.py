#!/usr/bin/env python3
"""Checks gnnc.nn's gradients against PyTorch autograd through PyG's layers.

For each of the eight layers (GCN, SAGE mean and max, GIN, GAT, GATv2,
Transformer, AGNN) on real graphs (cora, pubmed from the data sets folder;
64 seeded input features, since only the graph matters here), the gnnc.nn
layer is loaded with the PyG layer's weights (load_state_dict, non-zero
biases), both run forward on the same input and backward from the same seeded
output gradient, and the output, the input gradient and every parameter
gradient are compared:

    max |gnnc - pyg| <= tol * max(1, max |pyg|)     (per tensor)

with tol = 1e-4 in float32 and 1e-9 in float64 (gnnc's kernels accumulate in
the function's float type, in a different order than PyG's scatter; the
float64 run shows the formulas agree to rounding). Prints a table, writes
JSON (--json), exits non-zero when any check fails. Needs torch,
torch_geometric and the gnnc package; run it on the GPU machine:

    python3 test/PyG/check_pyg_grads.py --graphs cora,pubmed --json grads.json
"""

import argparse
import json
import os
import sys

import torch
import torch_geometric
from torch_geometric import nn as pyg_nn

import gnnc.nn as gnn
from check_pyg_parity import add_common_arguments, dataset_folder, load_edges, start

IN = 64
TOL = {torch.float32: 1e-4, torch.float64: 1e-9}


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(IN, IN), torch.nn.ReLU(),
                               torch.nn.Linear(IN, IN))


# (name, class, args, kwargs); kwargs["nn"] is a factory (GIN).
LAYERS = [
    ("gcn", "GCNConv", (IN, IN), {}),
    ("sage_mean", "SAGEConv", (IN, IN), {}),
    ("sage_max", "SAGEConv", (IN, IN), dict(aggr="max")),
    ("gin", "GINConv", (), dict(nn=mlp, train_eps=True)),
    ("gat", "GATConv", (IN, 16), dict(heads=4)),
    ("gatv2", "GATv2Conv", (IN, 16), dict(heads=4)),
    ("transformer", "TransformerConv", (IN, 16), dict(heads=4)),
    ("agnn", "AGNNConv", (), {}),
]


def num_nodes(folder):
    meta = dict(line.split(maxsplit=1) for line in open(os.path.join(folder, "meta.txt")))
    return int(meta["nodes"])


def make(layer, dtype, device):
    _, cls, args, kwargs = layer
    kw = dict(kwargs)
    torch.manual_seed(0)
    if "nn" in kw:
        net = kw.pop("nn")()
        ours_kw, pyg_kw = dict(kw, nn=net), dict(kw, nn=mlp())
    else:
        ours_kw, pyg_kw = kw, kw
    torch.manual_seed(1)
    pyg = getattr(pyg_nn, cls)(*args, **pyg_kw)
    ours = getattr(gnn, cls)(*args, **ours_kw)
    with torch.no_grad():  # PyG initialises biases (and eps) to 0
        for name, p in pyg.named_parameters():
            if name.endswith("bias") or name in ("eps", "beta"):
                p.uniform_(-0.5, 0.5)
    ours.load_state_dict(pyg.state_dict())
    return ours.to(device, dtype).eval(), pyg.to(device, dtype).eval()


def compare(ours, theirs):
    """(max |diff|, scale) of two tensors."""
    d = (ours.detach() - theirs.detach()).abs().max().item() if theirs.numel() else 0.0
    s = max(1.0, theirs.detach().abs().max().item() if theirs.numel() else 0.0)
    return d, s


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dtypes", default="float32,float64")
    add_common_arguments(p, "cora,pubmed")
    args = p.parse_args()
    start(args)
    rows, ok = [], True
    print(f"{'graph':8} {'layer':12} {'dtype':8} {'tensor':24} {'max |diff|':>11} "
          f"{'scale':>10} {'ratio':>8}  result")
    for graph in args.graphs.split(","):
        folder = dataset_folder(args.datasets, graph)
        n = num_nodes(folder)
        edge_index = load_edges(folder).to(args.device)
        for dtype in (getattr(torch, d) for d in args.dtypes.split(",")):
            g = torch.Generator().manual_seed(2)
            x0 = torch.randn(n, IN, generator=g, dtype=torch.float64).to(args.device, dtype)
            for layer in LAYERS:
                ours, pyg = make(layer, dtype, args.device)
                x1, x2 = x0.clone().requires_grad_(), x0.clone().requires_grad_()
                out1, out2 = ours(x1, edge_index), pyg(x2, edge_index)
                dy = torch.randn(out2.shape, generator=torch.Generator().manual_seed(3),
                                 dtype=torch.float64).to(args.device, dtype)
                out1.backward(dy)
                out2.backward(dy)
                checks = [("out", out1, out2), ("x.grad", x1.grad, x2.grad)]
                theirs = dict(pyg.named_parameters())
                for name, q in ours.named_parameters():
                    t = theirs[name]
                    if t.grad is None and q.grad is None:
                        continue
                    zero = torch.zeros_like(t)
                    checks.append((name + ".grad", q.grad if q.grad is not None else zero,
                                   t.grad if t.grad is not None else zero))
                for what, a, b in checks:
                    d, s = compare(a, b)
                    ratio = d / (TOL[dtype] * s)
                    passed = bool(torch.isfinite(a).all().item() and ratio <= 1.0)
                    ok &= passed
                    rows.append(dict(graph=graph, layer=layer[0], dtype=str(dtype)[6:],
                                     tensor=what, max_abs_diff=d, scale=s,
                                     ratio_to_tolerance=ratio, passed=passed))
                    print(f"{graph:8} {layer[0]:12} {str(dtype)[6:]:8} {what:24} {d:11.3e} "
                          f"{s:10.3e} {ratio:8.4f}  {'PASS' if passed else 'FAIL'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(tolerance="max|gnnc-pyg| <= tol*max(1,max|pyg|), tol 1e-4 (f32), "
                           "1e-9 (f64)", device=args.device, torch=torch.__version__,
                           pyg=torch_geometric.__version__, rows=rows), f, indent=2)
    n_pass = sum(r["passed"] for r in rows)
    print(f"{n_pass} passed, {len(rows) - n_pass} failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
