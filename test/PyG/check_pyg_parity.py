#!/usr/bin/env python3
"""Checks the reference evaluator against PyTorch Geometric's layers.

For every example layer, `gnn-run --backend=reference` runs it on a graph with
seeded inputs, dumping the inputs (float32 .npy) and its result (float64 .npy).
The same inputs are loaded into the matching PyG layer, run in float32 (on the
GPU when there is one), and the outputs are compared elementwise:

    |pyg - ref| <= 1e-4 * (1 + |ref|)

Prints a table, writes JSON (--json), exits non-zero when any layer fails.
Needs torch and torch_geometric; run it on the GPU machine:

    python3 test/PyG/check_pyg_parity.py --gnn-run build/bin/gnn-run \
        --graphs cora,citeseer --json parity.json
"""

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

import torch_geometric
from torch_geometric.nn import (AGNNConv, GATConv, GATv2Conv, GCNConv,
                                GINConv, SAGEConv, TransformerConv)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RTOL = 1e-4


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a)).float()


def set_linear(lin, weight, bias=None):
    """Loads an IR weight (in x out, for x @ W) into a PyG/torch Linear."""
    with torch.no_grad():
        lin.weight.copy_(t(weight).T)
        if bias is not None:
            lin.bias.copy_(t(bias))
        elif getattr(lin, "bias", None) is not None:
            lin.bias.zero_()


def make_gcn(a):
    conv = GCNConv(64, 64)
    set_linear(conv.lin, a[2])
    with torch.no_grad():
        conv.bias.copy_(t(a[3]))
    return conv, a[1]


def make_sage(aggr):
    def make(a):
        conv = SAGEConv(64, 64, aggr=aggr)
        set_linear(conv.lin_l, a[2], a[3])
        set_linear(conv.lin_r, a[4])
        return conv, a[1]
    return make


def make_gin(a):
    mlp = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(),
                              torch.nn.Linear(64, 64))
    # examples/gin.mlir is GINConv(nn, train_eps=True): eps is argument 2.
    conv = GINConv(mlp, train_eps=True)
    # GINConv re-initialises its nn on construction: load the weights after.
    with torch.no_grad():
        conv.eps.copy_(t(a[2]).view_as(conv.eps))
    set_linear(conv.nn[0], a[3], a[4])
    set_linear(conv.nn[2], a[5], a[6])
    return conv, a[1]


def make_gat(a):
    conv = GATConv(64, 16, heads=4, add_self_loops=False)
    lin = conv.lin if getattr(conv, "lin", None) is not None else conv.lin_src
    set_linear(lin, a[2])
    with torch.no_grad():
        conv.att_src.copy_(t(a[3]).view(1, 4, 16))
        conv.att_dst.copy_(t(a[4]).view(1, 4, 16))
        conv.bias.copy_(t(a[5]))
    return conv, a[1]


def make_gatv2(a):
    conv = GATv2Conv(64, 16, heads=4, add_self_loops=False)
    set_linear(conv.lin_l, a[2], a[3])
    set_linear(conv.lin_r, a[4], a[5])
    with torch.no_grad():
        conv.att.copy_(t(a[6]).view(1, 4, 16))
        conv.bias.copy_(t(a[7]))
    return conv, a[1]


def make_transformer(a):
    conv = TransformerConv(64, 16, heads=4)
    set_linear(conv.lin_query, a[2], a[3])
    set_linear(conv.lin_key, a[4], a[5])
    set_linear(conv.lin_value, a[6], a[7])
    set_linear(conv.lin_skip, a[8], a[9])
    return conv, a[1]


def make_agnn(a):
    conv = AGNNConv(requires_grad=True, add_self_loops=False)
    with torch.no_grad():
        conv.beta.copy_(t(a[2]).view_as(conv.beta))
    return conv, a[1]


LAYERS = [
    ("gcn", "GCNConv", make_gcn),
    ("sage_mean", "SAGEConv(mean)", make_sage("mean")),
    ("sage_max", "SAGEConv(max)", make_sage("max")),
    ("gin", "GINConv", make_gin),
    ("gat", "GATConv", make_gat),
    ("gatv2", "GATv2Conv", make_gatv2),
    ("transformer", "TransformerConv", make_transformer),
    ("agnn", "AGNNConv", make_agnn),
]


def load_edges(folder):
    with gzip.open(os.path.join(folder, "edges.txt.gz"), "rt") as f:
        e = np.loadtxt(f, dtype=np.int64).reshape(-1, 2)
    return torch.from_numpy(e.T.copy())


def dataset_folder(datasets, name):
    """The folder of data set `name`: under `datasets`, else the copy shipped
    in the repository's data/ (Cora and Citeseer), so that a fresh clone
    checks those without ../shared/datasets."""
    folder = os.path.join(datasets, name)
    shipped = os.path.join(ROOT, "data", name)
    if not os.path.isdir(folder) and os.path.isfile(os.path.join(shipped, "meta.txt")):
        return shipped
    return folder


def add_common_arguments(p, graphs):
    """--datasets (a data set missing there is looked up in data/), --graphs
    (default `graphs`), --json, --device."""
    p.add_argument("--datasets", default=os.environ.get(
        "GNNC_DATASETS", os.path.join(ROOT, "..", "shared", "datasets")))
    p.add_argument("--graphs", default=graphs)
    p.add_argument("--json", default=None)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")


def start(args):
    """Exact float32 matmuls in PyTorch (no TF32), and the versions used."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"torch {torch.__version__}, torch_geometric {torch_geometric.__version__}, "
          f"device {args.device}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gnn-run", default=os.path.join(ROOT, "build/bin/gnn-run"))
    p.add_argument("--seed", type=int, default=0)
    add_common_arguments(p, "cora")
    args = p.parse_args()
    start(args)
    rows, ok = [], True
    print(f"{'graph':10} {'layer':12} {'PyG layer':16} {'max |diff|':>11} "
          f"{'max |ref|':>10} {'worst ratio':>11}  result")
    for graph in args.graphs.split(","):
        folder = dataset_folder(args.datasets, graph)
        edge_index = load_edges(folder).to(args.device)
        for name, pyg_name, make in LAYERS:
            with tempfile.TemporaryDirectory() as tmp:
                cmd = [args.gnn_run, os.path.join(ROOT, "examples", name + ".mlir"),
                       "--graph=" + folder, f"--seed={args.seed}",
                       "--dump-inputs=" + tmp, "--output-dir=" + tmp]
                run = subprocess.run(cmd, capture_output=True, text=True)
                if run.returncode != 0:
                    print(run.stderr, file=sys.stderr)
                    raise SystemExit(f"gnn-run failed on {name}/{graph}")
                inputs = {}
                for f in os.listdir(tmp):
                    if f.startswith("arg"):
                        inputs[int(f[3:-4])] = np.load(os.path.join(tmp, f))
                ref = np.load(os.path.join(tmp, "result0.npy"))
            torch.manual_seed(0)
            conv, x = make(inputs)
            conv = conv.to(args.device).eval()
            with torch.no_grad():
                out = conv(t(x).to(args.device), edge_index).double().cpu().numpy()
            if out.shape != ref.shape:
                raise SystemExit(f"{name}: PyG shape {out.shape} != ref {ref.shape}")
            diff = np.abs(out - ref)
            ratio = float(np.max(diff / (RTOL * (1 + np.abs(ref))))) if diff.size else 0.0
            passed = bool(np.all(np.isfinite(out)) and ratio <= 1.0)
            ok &= passed
            rows.append(dict(graph=graph, layer=name, pyg=pyg_name,
                             max_abs_diff=float(diff.max()) if diff.size else 0.0,
                             max_abs_ref=float(np.abs(ref).max()) if ref.size else 0.0,
                             worst_ratio_to_tolerance=ratio, passed=passed,
                             shape=list(ref.shape)))
            r = rows[-1]
            print(f"{graph:10} {name:12} {pyg_name:16} {r['max_abs_diff']:11.3e} "
                  f"{r['max_abs_ref']:10.3e} {ratio:11.4f}  {'PASS' if passed else 'FAIL'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(tolerance="|pyg-ref| <= 1e-4*(1+|ref|)", device=args.device,
                           torch=torch.__version__, pyg=torch_geometric.__version__,
                           rows=rows), f, indent=2)
    n_pass = sum(r["passed"] for r in rows)
    print(f"{n_pass} passed, {len(rows) - n_pass} failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
