#!/usr/bin/env python3
"""Does renumbering a graph's nodes pay? (issue 29 item 4; docs/Python.md,
"Reordering a graph")

For each graph, the same gnnc functions on the graph as given and renumbered
by ``gnnc.utils.locality_order`` (``rcm``, ``degree``): forward and
forward+backward median times (CUDA events), the time to compute the order,
and the mean |id(src) - id(dst)| of the edges (how far apart the gathered
rows lie). The renumbered runs take the renumbered graph and features
directly (no per-call permutation), as a model trained in the new order
would; their results are compared with the original's, permuted.

Ops (F features of ``--dtype``): ``spmm`` (sum, unweighted), ``weighted``
(sum with edge weights, which get a gradient too), ``max``.

    python bench/reorder.py --datasets DIR --graphs pubmed musae-github
        [G.npy ...] [--methods rcm degree] [--features 128]
        [--dtype float32|bfloat16] [--device cuda]

A graph is a data-set folder under DIR (meta.txt, edges.txt.gz) or an
``.npy`` edge list (int64, [E, 2] or [2, E]: ``../shared/bench/peers/
dump_graph.py``'s output). ``--device cpu`` only checks that the script
runs (the reference evaluator; its times say nothing about the GPU).
"""

import argparse
import json
import pathlib
import sys
import time

import torch

import gnnc

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from nn_layers import load_graph, median_ms  # noqa: E402

_T = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16",
      torch.float64: "f64"}


def source(op: str, f: int, t: str) -> str:
    x = f"tensor<?x{f}x{t}>"
    if op == "weighted":
        return (f'func.func @f(%g: !gnn.graph, %x: {x}, %w: tensor<?x{t}> '
                f'{{gnn.domain = "edge"}}) -> {x} {{\n'
                f'  %r = gnn.spmm sum %g, %x weights(%w : tensor<?x{t}>) : {x} -> {x}\n'
                f'  return %r : {x}\n}}\n')
    kind = {"spmm": "sum", "max": "max"}[op]
    return (f"func.func @f(%g: !gnn.graph, %x: {x}) -> {x} {{\n"
            f"  %r = gnn.spmm {kind} %g, %x : {x} -> {x}\n"
            f"  return %r : {x}\n}}\n")


def load(spec: str, datasets: str, dev):
    if spec.endswith(".npy"):
        import numpy as np
        a = torch.from_numpy(np.load(spec)).to(torch.int64)
        ei = a.t().contiguous() if a.shape[-1] == 2 and a.shape[0] != 2 else a
        n = int(ei.max()) + 1 if ei.numel() else 0
        return ei.to(dev), n, pathlib.Path(spec).stem
    ei, n = load_graph(pathlib.Path(datasets) / spec, dev)
    return ei, n, spec


def timed(fn, reps, warmup, dev):
    """Median ms of `fn` (CUDA events); on the CPU the mean wall time."""
    if dev.type == "cuda":
        return median_ms(fn, reps, warmup)
    for _ in range(warmup):
        fn()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps * 1e3


def spread(ei):
    return (ei[0] - ei[1]).abs().double().mean().item() if ei.numel() else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=str(HERE.parent / "data"))
    ap.add_argument("--graphs", nargs="+", default=["cora"])
    ap.add_argument("--methods", nargs="+", default=["rcm", "degree"],
                    choices=["rcm", "degree"])
    ap.add_argument("--ops", nargs="+", default=["spmm", "weighted", "max"],
                    choices=["spmm", "weighted", "max"])
    ap.add_argument("--features", type=int, default=128)
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    args = ap.parse_args()
    dev = torch.device(args.device)
    dt = getattr(torch, args.dtype)
    rows = []
    for spec in args.graphs:
        ei, n, name = load(spec, args.datasets, dev)
        e = ei.shape[1]
        gen = torch.Generator().manual_seed(0)
        x = torch.randn(n, args.features, generator=gen).to(dev, dt)
        w = torch.rand(e, generator=gen).to(dev, dt)
        variants = [("original", None, ei, 0.0)]
        for m in args.methods:
            t0 = time.perf_counter()
            order = gnnc.utils.locality_order(ei, n, m)
            order_s = time.perf_counter() - t0
            rank = torch.empty_like(order)
            rank[order] = torch.arange(n, device=order.device)
            variants.append((m, order, rank[ei], order_s))
        for op in args.ops:
            fn = gnnc.compile(source(op, args.features, _T[dt]))
            want = None
            for label, order, vei, order_s in variants:
                g = gnnc.Graph(vei, n)
                xs = x if order is None else x.index_select(0, order)
                extra = (w,) if op == "weighted" else ()
                with torch.no_grad():
                    out = fn(g, xs, *extra)
                back = out if order is None else out.index_select(
                    0, torch.argsort(order))
                if want is None:
                    want = back
                diff = (back.float() - want.float()).abs().max().item() if n else 0.0
                fwd = timed(lambda: fn(g, xs, *extra), args.reps, args.warmup, dev)
                xg = xs.clone().requires_grad_()
                eg = tuple(t.clone().requires_grad_() for t in extra)
                dy = torch.randn(out.shape, generator=gen).to(dev, dt)

                def step():
                    xg.grad = None
                    for t in eg:
                        t.grad = None
                    fn(g, xg, *eg).backward(dy)
                fb = timed(step, args.reps, args.warmup, dev)
                r = dict(graph=name, nodes=n, edges=e, op=op, dtype=args.dtype,
                         order=label, order_s=order_s, mean_id_gap=spread(vei),
                         fwd_ms=fwd, fwdbwd_ms=fb, max_diff_vs_original=diff)
                print(json.dumps(r), flush=True)
                rows.append(r)
    print("\n| graph | op | order | mean id gap | order s | fwd ms | fwd+bwd ms | "
          "fwd vs original | fwd+bwd vs original |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    base = {(r["graph"], r["op"]): r for r in rows if r["order"] == "original"}
    for r in rows:
        b = base[(r["graph"], r["op"])]
        print(f"| {r['graph']} | {r['op']} | {r['order']} | {r['mean_id_gap']:.0f} | "
              f"{r['order_s']:.2f} | {r['fwd_ms']:.3f} | {r['fwdbwd_ms']:.3f} | "
              f"{b['fwd_ms'] / r['fwd_ms']:.2f}x | {b['fwdbwd_ms'] / r['fwdbwd_ms']:.2f}x |")


if __name__ == "__main__":
    main()
