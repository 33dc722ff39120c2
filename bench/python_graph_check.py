#!/usr/bin/env python3
"""The per-call cost of the graph cache's contents check (gnnc/_core.py,
_Snapshot.matches): a call with an edge_index tensor compares it with the
copy its structures were built from; a call with a gnnc.Graph (which owns its
indices) does not. Times, per graph size:

  check      the comparison alone (_Snapshot.matches on an unchanged tensor)
  tensor     a whole call fn(edge_index, x, num_nodes=N) (check + aggregation)
  graph      the same call with a gnnc.Graph (no check)
  copy       what the cache keeps for the comparison: a copy of edge_index

on the CPU (reference evaluator) and, with --device cuda, on CUDA tensors
(the check's torch.equal reads its verdict back: one device->host copy that
waits for the stream; `tensor` and `graph` are then timed with a
synchronisation after each call, and `tensor-async` / `graph-async` time a
burst of calls with one synchronisation at the end, where the check's wait
shows). Means of time.perf_counter over many calls after warm-up.

    PYTHONPATH=build/python python3 bench/python_graph_check.py [--device cuda]
"""

import argparse
import time

import torch

import gnnc
from gnnc import _core

SIZES = [(1_000, 10_000), (100_000, 1_000_000)]


def source(f: int) -> str:
    t = f"tensor<?x{f}xf32>"
    return (f"func.func @agg(%g: !gnn.graph, %x: {t}) -> {t} {{\n"
            f"  %r = gnn.spmm sum %g, %x : {t} -> {t}\n  return %r : {t}\n}}\n")


def mean_seconds(fn, calls: int, sync) -> float:
    for _ in range(3):
        fn()
    sync()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    sync()
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--features", type=int, default=16)
    parser.add_argument("--calls", type=int, default=0,
                        help="calls per timing (default: by size)")
    args = parser.parse_args()
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    fn = gnnc.compile(source(args.features))
    print(f"device {device}, F = {args.features}, torch {torch.__version__}, "
          f"{torch.get_num_threads()} CPU threads")
    print(f"{'nodes':>9} {'edges':>10} {'check':>10} {'tensor':>10} {'graph':>10} "
          + (f"{'tensor-async':>13} {'graph-async':>12} " if cuda else "")
          + f"{'copy MiB':>9}")
    for n, e in SIZES:
        gen = torch.Generator().manual_seed(0)
        ei = torch.randint(0, n, (2, e), generator=gen).to(device)
        x = torch.randn(n, args.features, generator=gen).to(device)
        g = gnnc.Graph.from_edge_index(ei, num_nodes=n)
        fn(ei, x, num_nodes=n)
        fn(g, x)
        # A package without the check (before it, for comparison): no
        # snapshot; the check column is then 0.
        snapshot = getattr(_core._graphs.get(ei, n), "snapshot", None)
        assert snapshot is None or (snapshot.copy is not None and snapshot.matches(ei))
        check = (lambda: snapshot.matches(ei)) if snapshot else (lambda: None)
        many = args.calls or (2000 if e <= 10_000 else 200)
        calls = args.calls or (200 if e <= 10_000 else (20 if not cuda else 200))

        def one(h):
            def call():
                fn(h, x, num_nodes=n)
                sync()
            return call

        row = [mean_seconds(check, many, sync),
               mean_seconds(one(ei), calls, sync), mean_seconds(one(g), calls, sync)]
        if cuda:
            row += [mean_seconds(lambda: fn(ei, x, num_nodes=n), calls, sync),
                    mean_seconds(lambda: fn(g, x), calls, sync)]
        mib = snapshot.copy.numel() * snapshot.copy.element_size() / 2**20 if snapshot else 0
        widths = [10, 10, 10, 13, 12]
        print(f"{n:>9} {e:>10} "
              + " ".join(f"{t * 1e3:>{w}.3f}" for t, w in zip(row, widths))
              + f" {mib:>9.1f}", flush=True)
    print("(milliseconds per call)")


if __name__ == "__main__":
    main()
