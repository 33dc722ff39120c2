#!/usr/bin/env python3
"""Every gnnc.nn layer against PyG's, as a user runs them (issue 28's
acceptance): forward+backward through autograd on real graphs, and the host
time per call on a small cached graph.

Layers (in -> out channels C, same weights on both sides, loaded from PyG's):
GCNConv, SAGEConv mean and max, GINConv (nn = Linear), GATConv, GATv2Conv and
TransformerConv (4 heads of C/4), AGNNConv; and ``gcn_ew`` (not in the
default list): GCNConv with learnable edge weights (``edge_weight`` in
(0, 1) requiring grad, so the step also computes their gradient, an
edge-sized dot product per edge).

* ``speed``: for each graph (a data-set folder: meta.txt + edges.txt.gz) and
  channel count, the median over CUDA-event-timed steps of
  ``out = layer(x, edge_index); (out * dy).sum().backward()`` after warm-up,
  gnnc and PyG alternating per layer; outputs compared (max |diff|).
* ``host``: per-call wall time of each layer's forward on a 1,000-node,
  10,000-edge graph (64 channels), K calls queued without synchronising, so
  the figure is the host's (the kernels take a few microseconds); with
  autograd recording (inputs require grad) and under ``torch.no_grad()``; and
  forward+backward of a 2-layer GCN on Cora (data/cora) per step, as two
  GCNConv layers and as the library's ``models.GCN``.

    python bench/nn_layers.py --datasets DIR [--graphs pubmed musae-github
        blogcatalog] [--channels 64 128] [--parts speed host] [--layers ...]
        [--autocast bf16|f16]

``--autocast`` runs the speed part's steps (forward and backward, both
libraries) under ``torch.autocast("cuda", dtype)``: the graph part of each
layer in that type, as a mixed-precision training step runs it.

Runs with GNNC_JIT=sync unless set (the steady state of each graph's own
compiled kernels). Prints one JSON line per measurement, then tables (ratio = PyG time / gnnc
time, so above 1 means gnnc is faster) with the geomean per layer.
"""

import argparse
import contextlib
import gzip
import json
import math
import os

# Steady state: every call on its graph's own compiled variant, not on the
# fallback GNNC_JIT=async runs while that one compiles in the background
# (docs/Python.md, "Specialisation and JIT latency").
os.environ.setdefault("GNNC_JIT", "sync")
import pathlib
import statistics
import sys
import time

import torch

LAYERS = ["gcn", "sage_mean", "sage_max", "gin", "gat", "gatv2", "transformer", "agnn"]
# Layers called with a learnable edge weight as their third argument.
EDGE_WEIGHTED = {"gcn_ew"}


def make(name, lib, c):
    nn = lib.nn if hasattr(lib, "nn") else lib
    if name in ("gcn", "gcn_ew"):
        return nn.GCNConv(c, c)
    if name == "sage_mean":
        return nn.SAGEConv(c, c, aggr="mean")
    if name == "sage_max":
        return nn.SAGEConv(c, c, aggr="max")
    if name == "gin":
        return nn.GINConv(torch.nn.Linear(c, c))
    if name == "gat":
        return nn.GATConv(c, c // 4, heads=4)
    if name == "gatv2":
        return nn.GATv2Conv(c, c // 4, heads=4)
    if name == "transformer":
        return nn.TransformerConv(c, c // 4, heads=4)
    if name == "agnn":
        return nn.AGNNConv()
    raise ValueError(name)


def pair(name, c, dev):
    import gnnc.nn
    import torch_geometric.nn as pygnn
    torch.manual_seed(0)
    pyg = make(name, pygnn, c).to(dev)
    ours = make(name, gnnc.nn, c).to(dev)
    ours.load_state_dict(pyg.state_dict())
    return ours, pyg


def load_graph(folder: pathlib.Path, dev):
    meta = dict(line.split(maxsplit=1) for line in open(folder / "meta.txt"))
    n = int(meta["nodes"])
    src, dst = [], []
    with gzip.open(folder / "edges.txt.gz", "rt") as fh:
        for line in fh:
            p = line.split()
            if len(p) >= 2 and not p[0].startswith("#"):
                src.append(int(p[0]))
                dst.append(int(p[1]))
    # The file lists every edge (meta.txt's `edges`), both directions of an
    # undirected graph included.
    return torch.tensor([src, dst], dtype=torch.int64).to(dev), n


def step_times(step, reps, warmup):
    """The CUDA-event times (ms) of `reps` calls of `step` after `warmup`,
    sorted."""
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return sorted(times)


def median_ms(step, reps, warmup):
    return statistics.median(step_times(step, reps, warmup))


def autocast(args):
    """torch.autocast for --autocast, else a context that does nothing."""
    if not args.autocast:
        return contextlib.nullcontext()
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[args.autocast]
    return torch.autocast("cuda", dtype=dtype)


def speed(args, dev, out):
    rows = []
    for g in args.graphs:
        ei, n = load_graph(pathlib.Path(args.datasets) / g, dev)
        for c in args.channels:
            gen = torch.Generator(device=dev).manual_seed(1)
            x = torch.randn(n, c, device=dev, generator=gen)
            w = torch.rand(ei.shape[1], device=dev, generator=gen)
            for name in args.layers:
                ours, pyg = pair(name, c, dev)
                xo = x.clone().requires_grad_()
                xp = x.clone().requires_grad_()
                # The layer's extra arguments: a learnable edge weight each.
                eo = (w.clone().requires_grad_(),) if name in EDGE_WEIGHTED else ()
                ep = (w.clone().requires_grad_(),) if name in EDGE_WEIGHTED else ()
                with autocast(args):
                    yo, yp = ours(xo, ei, *eo), pyg(xp, ei, *ep)
                diff = (yo - yp).abs().max().item() if yo.numel() else 0.0
                dy = torch.randn(yp.shape, device=dev, generator=gen)
                grad_diff = None
                if eo:
                    with autocast(args):
                        yo.mul(dy).sum().backward()
                    yp.mul(dy).sum().backward()
                    grad_diff = (eo[0].grad - ep[0].grad).abs().max().item()

                def step(layer, xx, extra):
                    def f():
                        with autocast(args):
                            layer(xx, ei, *extra).mul(dy).sum().backward()
                    return f
                t = {}
                # Alternate twice so neither side always runs warm.
                for rnd in range(2):
                    for side, layer, xx, extra in (("gnnc", ours, xo, eo), ("pyg", pyg, xp, ep)):
                        ms = median_ms(step(layer, xx, extra), args.reps, args.warmup)
                        t[side] = min(t.get(side, math.inf), ms)
                r = dict(part="speed", graph=g, nodes=n, edges=ei.shape[1], channels=c,
                         layer=name, gnnc_ms=t["gnnc"], pyg_ms=t["pyg"],
                         ratio=t["pyg"] / t["gnnc"], max_abs_diff=diff,
                         autocast=args.autocast)
                if grad_diff is not None:
                    r["edge_weight_grad_max_abs_diff"] = grad_diff
                print(json.dumps(r), flush=True)
                rows.append(r)
    out["speed"] = rows


def host_per_call(fn, calls, warmup=20):
    # Warm: the graph built, the function's variant chosen, the repeated
    # run captured for replay (a cached graph's steady state, both sides).
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    # Host: the queueing loop; wall: until the GPU is done too.
    return (t1 - t0) / calls * 1e6, (t2 - t0) / calls * 1e6


def host(args, dev, out):
    rows = []
    gen = torch.Generator().manual_seed(3)
    n, e, c = 1000, 10000, 64
    ei = torch.randint(0, n, (2, e), generator=gen).to(dev)
    x = torch.randn(n, c, generator=gen).to(dev)
    for name in args.layers:
        if name in EDGE_WEIGHTED:  # the same layer as its plain one here
            continue
        ours, pyg = pair(name, c, dev)
        for mode in ("autograd", "no_grad"):
            xx = x.clone().requires_grad_(mode == "autograd")
            for side, layer in (("gnnc", ours), ("pyg", pyg)):
                def f():
                    if mode == "no_grad":
                        with torch.no_grad():
                            layer(xx, ei)
                    else:
                        layer(xx, ei)
                h, w = host_per_call(f, args.calls)
                r = dict(part="host", layer=name, mode=mode, side=side,
                         host_us=h, wall_us=w)
                print(json.dumps(r), flush=True)
                rows.append(r)
    # A 2-layer GCN on Cora, forward+backward per step.
    cora = pathlib.Path(__file__).resolve().parents[1] / "data" / "cora"
    if (cora / "meta.txt").is_file():
        import gnnc.nn
        import torch_geometric.nn as pygnn
        ei, n = load_graph(cora, dev)
        meta = dict(l.split(maxsplit=1) for l in open(cora / "meta.txt"))
        f, k = int(meta["features"]), int(meta["classes"])
        xc = torch.randn(n, f, device=dev)
        for side, lib in (("gnnc", gnnc.nn), ("pyg", pygnn)):
            torch.manual_seed(0)
            l1, l2 = lib.GCNConv(f, 16).to(dev), lib.GCNConv(16, k).to(dev)
            # The same network as the library's model class (gnnc's runs
            # both layers as one function: one op forward, one backward).
            model = lib.models.GCN(f, 16, 2, k).to(dev)

            def step():
                h = torch.relu(l1(xc, ei))
                l2(h, ei).sum().backward()

            def model_step():
                model(xc, ei).sum().backward()
            for layer, fn in (("gcn2_cora_fwd_bwd", step),
                              ("gcn2_model_cora_fwd_bwd", model_step)):
                h, w = host_per_call(fn, args.calls // 4)
                r = dict(part="host", layer=layer, mode="autograd",
                         side=side, host_us=h, wall_us=w)
                print(json.dumps(r), flush=True)
                rows.append(r)
    out["host"] = rows


def tables(out):
    if out.get("speed"):
        print("\nforward+backward, ms (ratio = PyG / gnnc)")
        print("| graph | C | layer | gnnc | PyG | ratio | max diff |")
        print("| --- | ---: | --- | ---: | ---: | ---: | ---: |")
        by_layer = {}
        for r in out["speed"]:
            print(f"| {r['graph']} | {r['channels']} | {r['layer']} | {r['gnnc_ms']:.3f} "
                  f"| {r['pyg_ms']:.3f} | {r['ratio']:.2f} | {r['max_abs_diff']:.1e} |")
            by_layer.setdefault(r["layer"], []).append(r["ratio"])
        allr = [x for v in by_layer.values() for x in v]
        print("\n| layer | min ratio | geomean |")
        print("| --- | ---: | ---: |")
        for k, v in by_layer.items():
            print(f"| {k} | {min(v):.2f} | {math.exp(sum(map(math.log, v)) / len(v)):.2f} |")
        print(f"| all | {min(allr):.2f} | {math.exp(sum(map(math.log, allr)) / len(allr)):.2f} |")
    if out.get("host"):
        print("\nhost time per call, us (wall: until the GPU is done)")
        print("| layer | mode | gnnc host | gnnc wall | PyG host | PyG wall |")
        print("| --- | --- | ---: | ---: | ---: | ---: |")
        keyed = {}
        for r in out["host"]:
            keyed.setdefault((r["layer"], r["mode"]), {})[r["side"]] = r
        for (layer, mode), s in keyed.items():
            g, p = s.get("gnnc"), s.get("pyg")
            print(f"| {layer} | {mode} | {g['host_us']:.1f} | {g['wall_us']:.1f} "
                  f"| {p['host_us']:.1f} | {p['wall_us']:.1f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default="../shared/datasets")
    ap.add_argument("--graphs", nargs="+", default=["pubmed", "musae-github", "blogcatalog"])
    ap.add_argument("--channels", nargs="+", type=int, default=[64, 128])
    ap.add_argument("--layers", nargs="+", default=LAYERS,
                    choices=LAYERS + sorted(EDGE_WEIGHTED))
    ap.add_argument("--parts", nargs="+", default=["speed", "host"], choices=["speed", "host"])
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--autocast", choices=["bf16", "f16"],
                    help="the speed part's steps under torch.autocast in this type")
    ap.add_argument("--backward-on-calling-thread", action="store_true",
                    help="every backward (gnnc's and PyG's) on the calling thread "
                         "(torch.autograd.set_multithreading_enabled(False)), not on "
                         "PyTorch's worker thread per device")
    args = ap.parse_args()
    if args.backward_on_calling_thread:
        torch.autograd.set_multithreading_enabled(False)
    if not torch.cuda.is_available():
        sys.exit("nn_layers.py: needs a GPU")
    dev = torch.device("cuda")
    out = {}
    if "host" in args.parts:
        host(args, dev, out)
    if "speed" in args.parts:
        speed(args, dev, out)
    tables(out)


if __name__ == "__main__":
    main()
