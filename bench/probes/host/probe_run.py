"""One layer's forward (no_grad) or forward+backward, 1,000 calls after 50,
for the probe build of the module (bench/results/host-s27/probe.patch),
which prints its per-phase table at exit when GNNC_PROBE is set.
    python bench/probes/host/probe_run.py gcn|sage|gin fwd|fwdbwd"""
import os, sys, time
os.environ.setdefault("GNNC_JIT", "sync")
import torch, gnnc.nn as gnn
torch.manual_seed(0)
n, e, c = 1000, 10000, 64
ei = torch.randint(0, n, (2, e), device="cuda"); x = torch.randn(n, c, device="cuda")
name, mode = sys.argv[1], sys.argv[2]
l = {"gcn": lambda: gnn.GCNConv(c, c), "sage": lambda: gnn.SAGEConv(c, c),
     "gin": lambda: gnn.GINConv(torch.nn.Linear(c, c))}[name]().cuda()
xg = x.clone().requires_grad_()
if mode == "fwd":
    def f():
        with torch.no_grad(): l(x, ei)
else:
    def f(): l(xg, ei).sum().backward()
for _ in range(50): f()
torch.cuda.synchronize()
os.environ["GNNC_PROBE"] = "1"
N = 1000; t = time.perf_counter()
for _ in range(N): f()
print(name, mode, "%.1f us/step (probe build)" % ((time.perf_counter() - t) / N * 1e6), flush=True)
torch.cuda.synchronize()
