"""Host and wall time of a graph build of a sampled batch's size (issue 30):
a new edge_index tensor per call (as the loader hands out), K distinct
index sets cycled so that no cached graph matches.
    python bench/probes/host/build_ab.py [nodes edges]"""
import sys, time
import torch
import gnnc._core as core

n = int(sys.argv[1]) if len(sys.argv) > 1 else 150000
e = int(sys.argv[2]) if len(sys.argv) > 2 else 280000
g = torch.Generator(device="cuda").manual_seed(0)
bases = []
for k in range(16):
    dst = torch.sort(torch.randint(0, n // 8, (e,), device="cuda", generator=g)).values
    src = torch.randint(0, n, (e,), device="cuda", generator=g)
    bases.append(torch.stack([src, dst]))
host, wall = [], []
import json
stats = core._graphs.get(bases[0], n).statistics
print("statistics", json.dumps(stats, sort_keys=True, default=str), flush=True)
for r in range(320):
    ei = bases[r % len(bases)].clone()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    core._handle(ei, n)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    if r >= 20:
        host.append((t1 - t0) * 1e6)
        wall.append((t2 - t0) * 1e6)
host.sort(); wall.sort()
print(f"build of {n} nodes, {e} edges: host {host[len(host) // 2]:.0f} us, "
      f"wall {wall[len(wall) // 2]:.0f} us (medians of {len(host)})", flush=True)
