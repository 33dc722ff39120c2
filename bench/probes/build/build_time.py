#!/usr/bin/env python3
"""Host wall time of gnnc's graph build for a new edge_index on the GPU
(gnnc._core's graph cache: the snapshot copy, the device build with its one
synchronisation), median of --reps builds of fresh tensors:

* random: E random edges on N nodes (unsorted);
* by-target: the same edges sorted by target (stable), not marked;
* marked: the same, marked sorted by target (_core._mark_dst_sorted, what
  the loader and a CSR adjacency do; skipped where the module predates it);
* batch: a NeighborLoader batch (fan-out [25, 10], 1024 seeds) of a
  power-law graph, as the loader hands it over.

    python3 bench/probes/build/build_time.py [--nodes N --edges E --reps K]
"""
import argparse
import statistics
import time

import torch

from gnnc import _core


def build_ms(make, reps, n):
    times = []
    for _ in range(reps + 2):
        ei = make()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        _core._graphs.get(ei, n)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times[2:])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--nodes", type=int, default=180000)
    p.add_argument("--edges", type=int, default=2000000)
    p.add_argument("--reps", type=int, default=15)
    a = p.parse_args()
    g = torch.Generator(device="cuda").manual_seed(0)
    n, e = a.nodes, a.edges

    def fresh():  # new contents every time: no cached graph to share
        return torch.randint(0, n, (2, e), device="cuda", generator=g)

    def by_dst():
        ei = fresh()
        return ei[:, torch.argsort(ei[1], stable=True)].contiguous()

    rows = {"random": build_ms(fresh, a.reps, n), "by-target": build_ms(by_dst, a.reps, n)}
    if hasattr(_core, "_mark_dst_sorted"):
        rows["marked"] = build_ms(lambda: _core._mark_dst_sorted(by_dst()), a.reps, n)
    from gnnc.loader import NeighborLoader

    class Data:
        pass
    d = Data()
    big = 200000
    d.edge_index = torch.randint(0, big, (2, 4000000), device="cuda", generator=g)
    d.x = torch.zeros(big, 1, device="cuda")
    d.num_nodes = big
    loader = NeighborLoader(d, [25, 10], batch_size=1024, shuffle=True)
    batches = [b for _, b in zip(range(a.reps + 2), loader)]
    sizes = [(b.edge_index.size(1), b.x.size(0)) for b in batches]
    times = []
    for b in batches:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        _core._graphs.get(b.edge_index, b.x.size(0))
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    rows["batch"] = statistics.median(times[2:])
    print(f"{torch.cuda.get_device_name()}: {e} edges on {n} nodes; loader batches of "
          f"{statistics.median(s[0] for s in sizes):.0f} edges on "
          f"{statistics.median(s[1] for s in sizes):.0f} nodes")
    for k, v in rows.items():
        print(f"  {k:10s} {v:7.3f} ms")


if __name__ == "__main__":
    main()
