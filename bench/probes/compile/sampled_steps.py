#!/usr/bin/env python3
"""A compiled 2-layer model trained on sampled subgraphs (a new node and
edge count every step): how many compiles, and the step times, against the
same model eager.

    python bench/probes/compile/sampled_steps.py [--dataset cora] [--model gcn]
        [--steps 40] [--fraction 0.2] [--dynamic auto|true] [--device cuda]

Each step takes the subgraph induced by a random `fraction` of the nodes
(torch_geometric.utils.subgraph semantics, relabelled)."""
import argparse, sys, time, statistics, pathlib
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "examples" / "python"))
import torch, torch.nn.functional as F
import train_cora as tc
import gnnc.nn
from torch._dynamo.utils import counters

p = argparse.ArgumentParser()
p.add_argument("--dataset", default="cora")
p.add_argument("--model", default="gcn")
p.add_argument("--steps", type=int, default=40)
p.add_argument("--fraction", type=float, default=0.2)
p.add_argument("--dynamic", default="auto", choices=["auto", "true"])
p.add_argument("--device", default="cuda")
a = p.parse_args()
dev = torch.device(a.device)
x, ei, y, masks, classes = tc.load_planetoid(tc.find_dataset(a.dataset), dev)
n = x.size(0)
g = torch.Generator().manual_seed(0)
batches = []
for _ in range(a.steps):
    keep = torch.randperm(n, generator=g)[: int(a.fraction * n)].to(dev)
    local = torch.full((n,), -1, dtype=torch.long, device=dev)
    local[keep] = torch.arange(keep.numel(), device=dev)
    m = (local[ei[0]] >= 0) & (local[ei[1]] >= 0)
    batches.append((x[keep], local[ei[:, m]], y[keep]))
sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)

for mode in ("eager", "compile"):
    torch.manual_seed(0)
    cls, lr = tc.SETTINGS[a.model]
    model = cls(gnnc.nn, x.shape[1], classes).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    fwd = model if mode == "eager" else torch.compile(
        model, fullgraph=True, dynamic=(True if a.dynamic == "true" else None))
    torch._dynamo.reset(); counters.clear()
    times = []
    for bx, bei, by in batches:
        sync(); t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(fwd(bx, bei), by, ignore_index=-1)  # (unlabelled: -1)
        loss.backward(); opt.step()
        sync(); times.append((time.perf_counter() - t0) * 1e3)
    later = times[3:]
    print(f"{a.dataset} {a.model} {mode:8s} dynamic={a.dynamic}: frames compiled "
          f"{counters['stats'].get('unique_graphs', 0)}, steps 1-3 "
          f"{' '.join(f'{t:.0f}' for t in times[:3])} ms, later median "
          f"{statistics.median(later):.2f} ms, max {max(later):.1f} ms, "
          f"> 100 ms: {sum(t > 100 for t in later)}", flush=True)
