"""What a backward costs on the host, and whether gnnc's presence changes it
(issue 28's host floors): host us per call of nn.Linear forward+backward on
1,000 x 64 CUDA features, in fresh processes that (a) import torch only,
(b) also import gnnc.nn, (c) also ran a gnnc GCNConv forward+backward,
(d) also import torch_geometric; each with PyTorch's multithreaded backward
(the default: the CUDA backward runs on the device's worker thread) and with
`torch.autograd.set_multithreading_enabled(False)` (on the calling thread).
Then GCNConv forward+backward of gnnc and PyG, both ways.
    python bench/probes/host/engine.py"""
import subprocess, sys

CHILD = r'''
import sys, time, torch
phase = sys.argv[1]
dev = "cuda"
torch.manual_seed(0)
x = torch.randn(1000, 64, device=dev, requires_grad=True)
ei = torch.randint(0, 1000, (2, 10000), device=dev)
lin = torch.nn.Linear(64, 64).to(dev)

def per_call(f, k=400):
    for _ in range(30):
        f()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(k):
        f()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / k * 1e6

layers = {}
if phase in ("gnnc", "gnnc-called", "pyg"):
    import gnnc.nn
    layers["gnnc GCNConv"] = gnnc.nn.GCNConv(64, 64).to(dev)
if phase in ("gnnc-called", "pyg"):
    layers["gnnc GCNConv"](x, ei).sum().backward()
if phase == "pyg":
    import torch_geometric.nn
    layers["PyG GCNConv"] = torch_geometric.nn.GCNConv(64, 64).to(dev)
rows = [("Linear fwd+bwd", lambda: lin(x).sum().backward())]
if phase == "pyg":
    rows += [(k, (lambda m: lambda: m(x, ei).sum().backward())(m)) for k, m in layers.items()]
for name, f in rows:
    best = {}
    for mt in (True, False):
        with torch.autograd.set_multithreading_enabled(mt):
            best[mt] = min(per_call(f) for _ in range(3))
    print(f"{phase:12s} {name:16s} multithreaded {best[True]:8.1f} us   calling thread {best[False]:8.1f} us",
          flush=True)
'''
for phase in ("torch", "gnnc", "gnnc-called", "pyg"):
    subprocess.run([sys.executable, "-c", CHILD, phase], check=False)
