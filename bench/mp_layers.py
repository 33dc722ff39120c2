#!/usr/bin/env python3
"""User-written gnnc.MessagePassing layers against PyG's (issue 33):
forward+backward through autograd, same weights on both sides.

The layers of examples/python/mp_layers.py (GENConv, GatedGraphConv with 2
steps, SuperGATConv MX with 4 heads of C/4 in eval mode (no self-supervised
loss), LEConv with edge weights, PNAConv, EdgeConv with a Linear nn,
ResGatedGraphConv, APPNP with K = 10 and alpha = 0.1, FAConv with eps =
0.1 and x_0 = x, CGConv without edge features, TAGConv with K = 3), C
channels in and out. A step is ``out = layer(x, ...);
(out * dy).sum().backward()`` into x and every parameter, timed by CUDA
events from an idle GPU (wall clock on the CPU). gnnc and PyG alternate in
--rounds rounds of --reps steps (the order flipped every round: the GPU
machine's host time, which decides host-bound steps, jitters by 10-20 %
from one second to the next); each side's figure is the median of its
rounds' medians, and the table shows the quartiles of the per-round
ratios beside it.

    python bench/mp_layers.py --graph musae-github [--datasets DIR]
    python bench/mp_layers.py --graph arxiv-like --peers ../shared/bench/peers
    python bench/mp_layers.py --device cpu --graph synthetic   # smoke check

``--graph``: a data-set folder under --datasets (meta.txt + edges.txt.gz,
read by bench/nn_layers.py's loader), a synthetic graph of the scoreboard's
generator (``arxiv-like``; --peers holds its graphs.py), or ``synthetic``
(a random 2,000-node, 20,000-edge graph; on the CPU gnnc runs its reference
evaluator, so CPU ratios say nothing of speed). Prints one JSON line per layer,
then a table (ratio = PyG / gnnc: above 1, gnnc is faster).
"""

import argparse
import copy
import json
import math
import os
import pathlib
import statistics
import sys
import time

os.environ.setdefault("GNNC_JIT", "sync")  # steady state, as nn_layers.py

import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples" / "python"))
from nn_layers import load_graph, median_ms  # noqa: E402

LAYERS = ["GENConv", "GatedGraphConv", "SuperGATConv", "LEConv", "PNAConv",
          "EdgeConv", "ResGatedGraphConv", "APPNP", "FAConv", "CGConv", "TAGConv"]


def pair(name, c, ei, n, dev):
    """(ours, PyG's, extra inputs after x and edge_index), same weights."""
    import mp_layers
    import torch_geometric.nn as pyg
    torch.manual_seed(0)
    extra = ()
    if name == "GENConv":
        ours, theirs = mp_layers.GENConv(c, c), pyg.GENConv(c, c)
    elif name == "GatedGraphConv":
        ours, theirs = mp_layers.GatedGraphConv(c, 2), pyg.GatedGraphConv(c, 2)
    elif name == "SuperGATConv":
        ours = mp_layers.SuperGATConv(c, c // 4, heads=4).eval()
        theirs = pyg.SuperGATConv(c, c // 4, heads=4).eval()
    elif name == "LEConv":
        ours, theirs = mp_layers.LEConv(c, c), pyg.LEConv(c, c)
        extra = (torch.rand(ei.size(1), device=dev),)
    elif name == "PNAConv":
        deg = torch.bincount(torch.bincount(ei[1], minlength=n)).cpu()
        ours = mp_layers.PNAConv(c, c, deg)
        theirs = pyg.PNAConv(c, c, ["mean", "min", "max", "std"],
                             ["identity", "amplification", "attenuation"], deg)
    elif name == "EdgeConv":
        lin = torch.nn.Linear(2 * c, c)
        ours, theirs = mp_layers.EdgeConv(lin), pyg.EdgeConv(copy.deepcopy(lin))
    elif name == "ResGatedGraphConv":
        ours, theirs = mp_layers.ResGatedGraphConv(c, c), pyg.ResGatedGraphConv(c, c)
    elif name == "APPNP":
        ours, theirs = mp_layers.APPNP(10, 0.1), pyg.APPNP(10, 0.1)
    elif name == "FAConv":
        ours, theirs = mp_layers.FAConv(c, eps=0.1), pyg.FAConv(c, eps=0.1)
    elif name == "CGConv":
        ours, theirs = mp_layers.CGConv(c), pyg.CGConv(c)
    elif name == "TAGConv":
        ours, theirs = mp_layers.TAGConv(c, c, K=3), pyg.TAGConv(c, c, K=3)
    else:
        raise ValueError(name)
    ours, theirs = ours.to(dev), theirs.to(dev)
    mp_layers.load_pyg_state(ours, theirs)
    return ours, theirs, extra


def wall_ms(step, reps, warmup):
    """median_ms's CPU counterpart: wall-clock milliseconds per step."""
    for _ in range(warmup):
        step()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def graph(args, dev):
    if args.graph == "synthetic":
        gen = torch.Generator().manual_seed(0)
        n = 2000
        return torch.randint(0, n, (2, 20000), generator=gen).to(dev), n
    folder = pathlib.Path(args.datasets) / args.graph
    if (folder / "meta.txt").is_file():
        return load_graph(folder, dev)
    if args.peers is None:
        sys.exit(f"mp_layers.py: no data set {folder}; pass --peers for the "
                 f"scoreboard's synthetic graphs")
    sys.path.insert(0, args.peers)
    import graphs
    n, e, alpha = graphs.SYNTHETIC[args.graph]
    return graphs.powerlaw_graph(n, e, alpha, seed=0, device=dev), n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", default="musae-github")
    ap.add_argument("--datasets", default="../shared/datasets")
    ap.add_argument("--peers", default=None, help="the scoreboard folder (graphs.py)")
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--layers", nargs="+", default=LAYERS, choices=LAYERS)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--reps", type=int, default=10, help="steps per side and round")
    ap.add_argument("--rounds", type=int, default=10,
                    help="rounds of gnnc and PyG alternating (the order flipped every "
                         "round); each side's figure is its median over the rounds")
    ap.add_argument("--warmup", type=int, default=5)
    args = ap.parse_args()
    dev = torch.device(args.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        sys.exit("mp_layers.py: no GPU (pass --device cpu for a smoke check)")
    timer = median_ms if dev.type == "cuda" else wall_ms
    ei, n = graph(args, dev)
    c = args.channels
    gen = torch.Generator(device=dev).manual_seed(1)
    x = torch.randn(n, c, device=dev, generator=gen)
    rows = []
    for name in args.layers:
        ours, theirs, extra = pair(name, c, ei, n, dev)
        xo, xp = x.clone().requires_grad_(), x.clone().requires_grad_()

        def call(layer, xx):  # FAConv takes x, x_0, edge_index (x_0 = x here)
            return layer(xx, xx, ei) if name == "FAConv" else layer(xx, ei, *extra)
        yo, yp = call(ours, xo), call(theirs, xp)
        diff = ((yo - yp).abs() / (1 + yp.abs())).max().item() if yp.numel() else 0.0
        dy = torch.randn(yp.shape, device=dev, generator=gen)

        def step(layer, xx):
            def f():
                for p in layer.parameters():
                    p.grad = None
                xx.grad = None
                (call(layer, xx) * dy).sum().backward()
            return f

        sides = (("gnnc", step(ours, xo)), ("pyg", step(theirs, xp)))
        for _, f in sides:
            timer(f, 1, args.warmup)
        rounds = {"gnnc": [], "pyg": []}
        for k in range(args.rounds):  # alternating, the order flipped each round
            for side, f in (sides if k % 2 == 0 else sides[::-1]):
                rounds[side].append(timer(f, args.reps, 1))
        t = {side: statistics.median(v) for side, v in rounds.items()}
        per_round = sorted(p / g for g, p in zip(rounds["gnnc"], rounds["pyg"]))
        q = statistics.quantiles(per_round, n=4) if len(per_round) > 1 else per_round * 3
        r = dict(graph=args.graph, nodes=n, edges=ei.size(1), channels=c, layer=name,
                 device=dev.type, gnnc_ms=t["gnnc"], pyg_ms=t["pyg"],
                 ratio=t["pyg"] / t["gnnc"], ratio_quartiles=[q[0], q[2]],
                 max_rel_diff=diff)
        print(json.dumps(r), flush=True)
        rows.append(r)
    print(f"\nforward+backward, ms, {args.graph} ({n} nodes, {ei.size(1)} edges), "
          f"C = {c}, {dev.type} (ratio = PyG / gnnc)")
    print("| layer | gnnc | PyG | ratio | per-round ratio quartiles | max rel diff |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        q1, q3 = r["ratio_quartiles"]
        print(f"| {r['layer']} | {r['gnnc_ms']:.3f} | {r['pyg_ms']:.3f} | {r['ratio']:.2f} "
              f"| {q1:.2f}-{q3:.2f} | {r['max_rel_diff']:.1e} |")
    ratios = [r["ratio"] for r in rows]
    print(f"| geomean | | | {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f} | | |")


if __name__ == "__main__":
    main()
