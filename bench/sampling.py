#!/usr/bin/env python3
"""Neighbour sampling throughput (issue 30): sampled edges per second of
gnnc.loader.NeighborLoader against a plain-PyTorch per-node sampler on the
same device, and PyG's NeighborLoader (on the CPU, its only mode) when
pyg-lib or torch-sparse is importable.

    python bench/sampling.py [--device cuda] [--graph synthetic:232965:114615892]
        [--fanout 25,10] [--batch-size 1024] [--batches 20] [--features 128]

* gnnc: batches of shuffled seeds, timed over --batches after two warm-up
  batches (synchronised at the end on CUDA); on the structure alone
  ("sample": CSC walk, relabelling, e_id), and
  once with --features float32 features gathered by n_id ("sample+gather").
* reference: the textbook loop, one frontier node at a time (torch.randperm
  of its in-edges, a dict for the relabelling), the same fan-outs, on the
  same device (.item() per node on CUDA); --ref-batches batches, it is slow.
* PyG: torch_geometric.loader.NeighborLoader over the same graph on the CPU,
  with the features; skipped, and said so, without pyg-lib / torch-sparse.

--graph: cora / citeseer (data/), or synthetic:N:E, sources and destinations
both power-law (weight ~ rank^-0.5 over a random node order, as
examples/python/train_ddp.py). Prints one JSON line per measurement, then a
table.
"""

import argparse
import gzip
import json
import pathlib
import sys
import time

import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]


def synthetic(n, e, device):
    sys.path.insert(0, str(ROOT / "examples" / "python"))
    from train_ddp import power_law_edges  # the reddit-like run's generator
    return power_law_edges(n, e, torch.Generator(device).manual_seed(0), device), n


def planetoid_edges(name, device):
    path = ROOT / "data" / name
    meta = dict(line.split(maxsplit=1) for line in open(path / "meta.txt"))
    with gzip.open(path / "edges.txt.gz", "rt") as fh:
        edges = [tuple(map(int, line.split())) for line in fh if line.strip()]
    return torch.tensor(edges).t().contiguous().to(device), int(meta["nodes"])


class Graph:
    def __init__(self, edge_index, num_nodes, x=None):
        self.edge_index, self.num_nodes, self.x = edge_index, num_nodes, x


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_gnnc(graph, args, device):
    from gnnc.loader import NeighborLoader
    loader = NeighborLoader(graph, args.fanout, batch_size=args.batch_size, shuffle=True,
                            generator=torch.Generator(device).manual_seed(0))
    return time_loader(loader, args.batches, device)


def time_loader(loader, batches, device):
    """(seconds, edges, nodes, batches) of `batches` batches after two
    warm-up ones, starting the loader over when it runs out."""
    it = iter(loader)
    for _ in range(2):
        next(it)
    sync(device)
    t0 = time.perf_counter()
    edges = nodes = 0
    for _ in range(batches):
        batch = next(it, None)
        if batch is None:
            it = iter(loader)
            batch = next(it)
        edges += batch.edge_index.size(1)
        nodes += batch.num_nodes
    sync(device)
    return time.perf_counter() - t0, edges, nodes, batches


def reference_batch(indptr, src, seeds, fanout, gen):
    """One batch the textbook way: a Python loop over frontier nodes."""
    local = {}
    n_id = []
    for s in seeds.tolist():
        local.setdefault(s, len(n_id))
        n_id.append(s)
    frontier = list(range(len(n_id)))
    rows, cols = [], []
    for k in fanout:
        new = []
        for v in frontier:
            lo, hi = int(indptr[n_id[v]]), int(indptr[n_id[v] + 1])
            nbrs = src[lo:hi]
            if 0 <= k < hi - lo:
                nbrs = nbrs[torch.randperm(hi - lo, generator=gen,
                                           device=nbrs.device)[:k]]
            for u in nbrs.tolist():
                if u not in local:
                    local[u] = len(n_id)
                    n_id.append(u)
                    new.append(local[u])
                rows.append(local[u])
                cols.append(v)
        frontier = new
    return n_id, rows, cols


def time_reference(graph, args, device):
    dst = graph.edge_index[1]
    perm = torch.sort(dst, stable=True).indices
    src = graph.edge_index[0][perm]
    indptr = torch.zeros(graph.num_nodes + 1, dtype=torch.long, device=device)
    torch.cumsum(torch.bincount(dst, minlength=graph.num_nodes), 0, out=indptr[1:])
    gen = torch.Generator(device).manual_seed(0)
    order = torch.randperm(graph.num_nodes, generator=gen, device=device)
    sync(device)
    t0 = time.perf_counter()
    edges = nodes = 0
    for b in range(args.ref_batches):
        seeds = order[b * args.batch_size:(b + 1) * args.batch_size]
        n_id, rows, cols = reference_batch(indptr, src, seeds, args.fanout, gen)
        edge_index = torch.tensor([rows, cols], dtype=torch.long, device=device)
        n_id = torch.tensor(n_id, device=device)
        edges += edge_index.size(1)
        nodes += n_id.numel()
    sync(device)
    return time.perf_counter() - t0, edges, nodes, args.ref_batches


def time_pyg(graph, args):
    try:
        from torch_geometric.data import Data
        from torch_geometric.loader import NeighborLoader
        from torch_geometric.typing import WITH_PYG_LIB, WITH_TORCH_SPARSE
    except ImportError as e:
        return f"torch_geometric is not importable ({e})"
    if not (WITH_PYG_LIB or WITH_TORCH_SPARSE):
        return "neither pyg-lib nor torch-sparse is importable: PyG cannot sample"
    data = Data(x=None if graph.x is None else graph.x.cpu(),
                edge_index=graph.edge_index.cpu(), num_nodes=graph.num_nodes)
    loader = NeighborLoader(data, args.fanout, batch_size=args.batch_size, shuffle=True)
    return time_loader(loader, args.batches, torch.device("cpu"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--graph", default="synthetic:50000:1000000")
    p.add_argument("--fanout", default="25,10")
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--batches", type=int, default=20)
    p.add_argument("--ref-batches", type=int, default=2)
    p.add_argument("--features", type=int, default=128)
    args = p.parse_args()
    args.fanout = [int(v) for v in args.fanout.split(",")]
    device = torch.device(args.device)

    if args.graph.startswith("synthetic:"):
        n, e = (int(v) for v in args.graph.split(":")[1:3])
        edge_index, n = synthetic(n, e, device)
    else:
        edge_index, n = planetoid_edges(args.graph, device)
    x = torch.randn(n, args.features, device=device)
    print(f"{args.graph}: {n} nodes, {edge_index.size(1)} edges; fan-out {args.fanout}, "
          f"batch {args.batch_size}; {device}", file=sys.stderr)

    rows = []

    def record(name, dev, result):
        if isinstance(result, str):
            print(json.dumps({"sampler": name, "skipped": result}))
            rows.append((name, dev, None, result))
            return
        secs, edges, nodes, batches = result
        r = {"sampler": name, "device": str(dev), "graph": args.graph,
             "fanout": args.fanout, "batch_size": args.batch_size, "batches": batches,
             "seconds": secs, "edges_per_s": edges / secs,
             "edges_per_batch": edges / batches, "nodes_per_batch": nodes / batches,
             "ms_per_batch": 1e3 * secs / batches}
        print(json.dumps(r))
        rows.append((name, dev, r, None))

    record("gnnc sample", device, time_gnnc(Graph(edge_index, n), args, device))
    record("gnnc sample+gather", device, time_gnnc(Graph(edge_index, n, x), args, device))
    record("reference per-node", device, time_reference(Graph(edge_index, n), args, device))
    record("pyg sample+gather", "cpu", time_pyg(Graph(edge_index, n, x), args))

    print("\n| sampler | device | edges/s | ms/batch | edges/batch | nodes/batch |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, dev, r, why in rows:
        if r is None:
            print(f"| {name} | {dev} | skipped: {why} | | | |")
        else:
            print(f"| {name} | {dev} | {r['edges_per_s']:.3g} | {r['ms_per_batch']:.2f} | "
                  f"{r['edges_per_batch']:.0f} | {r['nodes_per_batch']:.0f} |")


if __name__ == "__main__":
    main()
