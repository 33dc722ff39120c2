#!/usr/bin/env python3
"""A heterogeneous GraphSAGE built with to_hetero (``--model sage``) or with
HeteroConv (``--model heteroconv``), or a 2-layer HGTConv model (``--model
hgt``), gnnc's layers against PyG's (issue
31): the same 2-layer model, the same weights and the same full-graph Adam
steps on a synthetic ogbn-mag-shaped graph; prints both loss curves and the
forward+backward time per step.

The graph has ogbn-mag's node and relation counts (paper 736,389, author
1,134,649, institution 8,740, field_of_study 59,965; writes 7,145,660,
affiliated_with 1,043,998, cites 5,416,271, has_topic 7,505,078: 1.94M
nodes, 21.1M edges) with uniform random endpoints, plus each relation's
reverse except cites' (PyG's ToUndirected: a 2-layer to_hetero model needs
every node type to receive messages): 7 relations, 35.7M edges. Every node
type has F random features; papers have random labels of 349 classes, the
loss is over every paper. --scale shrinks every count (a CPU smoke run:
--device cpu --scale 0.001; on the CPU gnnc runs its reference evaluator).

    python bench/hetero_sage.py [--model sage|heteroconv|hgt] [--steps 10] [--hidden 64]
        [--features 128] [--heads 2]

HGT model: two ``HGTConv(hidden, heads)`` layers (the first lazy), then a
``Linear(hidden, 349)`` on the papers.
"""

import argparse
import copy
import statistics
import time

import torch
import torch.nn.functional as F

NODES = {"paper": 736389, "author": 1134649, "institution": 8740,
         "field_of_study": 59965}
RELATIONS = [("author", "writes", "paper", 7145660),
             ("author", "affiliated_with", "institution", 1043998),
             ("paper", "cites", "paper", 5416271),
             ("paper", "has_topic", "field_of_study", 7505078)]
CLASSES = 349


def mag_like(scale, features, device):
    from torch_geometric.data import HeteroData
    g = torch.Generator(device).manual_seed(0)
    data = HeteroData()
    counts = {k: max(2, int(v * scale)) for k, v in NODES.items()}
    for k, n in counts.items():
        data[k].x = torch.randn(n, features, generator=g, device=device)
    data["paper"].y = torch.randint(CLASSES, (counts["paper"],), generator=g, device=device)
    for src, rel, dst, e in RELATIONS:
        e = max(1, int(e * scale))
        ei = torch.stack([torch.randint(counts[src], (e,), generator=g, device=device),
                          torch.randint(counts[dst], (e,), generator=g, device=device)])
        data[src, rel, dst].edge_index = ei
        if src != dst:
            data[dst, "rev_" + rel, src].edge_index = ei.flip(0)
    return data


class Sage(torch.nn.Module):
    def __init__(self, nn, hidden):
        super().__init__()
        self.conv1 = nn.SAGEConv((-1, -1), hidden)
        self.conv2 = nn.SAGEConv((-1, -1), CLASSES)

    def forward(self, x, edge_index):
        return self.conv2(self.conv1(x, edge_index).relu(), edge_index)


class HGT(torch.nn.Module):
    def __init__(self, nn, hidden, metadata, heads):
        super().__init__()
        self.convs = torch.nn.ModuleList([nn.HGTConv(-1, hidden, metadata, heads),
                                          nn.HGTConv(hidden, hidden, metadata, heads)])
        self.lin = torch.nn.Linear(hidden, CLASSES)

    def forward(self, x_dict, edge_index_dict):
        for conv in self.convs:
            x_dict = conv(x_dict, edge_index_dict)
        return {"paper": self.lin(x_dict["paper"])}


class HeteroSage(torch.nn.Module):
    """The same GraphSAGE as two HeteroConv layers (one SAGEConv per edge
    type, summed per node type): PyG's HeteroConv or gnnc.nn.HeteroConv."""

    def __init__(self, nn, hidden, metadata):
        super().__init__()
        self.conv1 = nn.HeteroConv({et: nn.SAGEConv((-1, -1), hidden) for et in metadata[1]},
                                   aggr="sum")
        self.conv2 = nn.HeteroConv({et: nn.SAGEConv((-1, -1), CLASSES)
                                    for et in metadata[1]}, aggr="sum")

    def forward(self, x_dict, edge_index_dict):
        x_dict = {k: v.relu() for k, v in self.conv1(x_dict, edge_index_dict).items()}
        return self.conv2(x_dict, edge_index_dict)


def build(lib, to_hetero, args, metadata):
    if args.model == "hgt":
        return HGT(lib, args.hidden, metadata, args.heads)
    if args.model == "heteroconv":
        return HeteroSage(lib, args.hidden, metadata)
    return to_hetero(Sage(lib, args.hidden), metadata, aggr="sum")


def train(model, data, steps, device):
    """(losses, seconds per forward+backward step after two warm-up steps)."""
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    losses, times = [], []
    for _ in range(steps):
        opt.zero_grad()
        sync()
        t = time.perf_counter()
        out = model(data.x_dict, data.edge_index_dict)["paper"]
        loss = F.cross_entropy(out, data["paper"].y)
        loss.backward()
        sync()
        times.append(time.perf_counter() - t)
        opt.step()
        losses.append(loss.item())
    return losses, statistics.median(times[2:] or times)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--features", type=int, default=128)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--model", choices=("sage", "heteroconv", "hgt"), default="sage")
    p.add_argument("--heads", type=int, default=2, help="HGT's heads")
    args = p.parse_args()
    device = torch.device(args.device)
    import gnnc.nn
    import torch_geometric.nn as pyg_nn

    data = mag_like(args.scale, args.features, device)
    print(f"{sum(data[k].num_nodes for k in data.node_types)} nodes, "
          f"{sum(data[k].edge_index.size(1) for k in data.edge_types)} edges, "
          f"{len(data.edge_types)} relations, {args.features} features, hidden "
          f"{args.hidden}, model {args.model}, {device}", flush=True)
    torch.manual_seed(0)
    pyg = build(pyg_nn, pyg_nn.to_hetero, args, data.metadata()).to(device)
    ours = build(gnnc.nn, gnnc.nn.to_hetero, args, data.metadata()).to(device)
    with torch.no_grad():  # sizes the lazy layers
        pyg(data.x_dict, data.edge_index_dict)
        ours(data.x_dict, data.edge_index_dict)
    ours.load_state_dict(copy.deepcopy(pyg.state_dict()))
    results = {}
    for name, model in (("gnnc", ours), ("pyg", pyg)):
        if device.type == "cuda":
            torch.cuda.empty_cache()  # (the other side's cached blocks)
            torch.cuda.reset_peak_memory_stats(device)
        try:
            results[name] = train(model, data, args.steps, device)
        except torch.OutOfMemoryError as e:
            # (PyG's HGT at full size does not fit an 80 GB card: say so and
            # keep the other side's figures)
            print(f"{name}: out of memory: {str(e).splitlines()[0]}", flush=True)
            results[name] = None
            model.zero_grad(set_to_none=True)
        if device.type == "cuda":
            print(f"{name}: peak device memory "
                  f"{torch.cuda.max_memory_allocated(device) / 2**30:.1f} GiB", flush=True)
    if None in results.values():
        for name, r in results.items():
            if r is not None:
                print(f"{name}: forward+backward per step {r[1] * 1e3:.1f} ms, losses "
                      f"{' '.join(f'{v:.5f}' for v in r[0])}")
        raise SystemExit(1)
    (lg, tg), (lp, tp) = results["gnnc"], results["pyg"]
    print("step  gnnc loss   PyG loss")
    for i, (a, b) in enumerate(zip(lg, lp)):
        print(f"{i:4d}  {a:9.5f}  {b:9.5f}")
    print(f"largest loss difference {max(abs(a - b) for a, b in zip(lg, lp)):.2e}")
    print(f"forward+backward per step: gnnc {tg * 1e3:.1f} ms, PyG {tp * 1e3:.1f} ms, "
          f"PyG / gnnc {tp / tg:.2f}x")


if __name__ == "__main__":
    main()
