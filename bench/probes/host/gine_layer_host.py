"""Host time of one planned GINE layer call (bench/gine.py's layer: hidden
64, edge_dim 4, nn = Linear-ReLU-Linear, train_eps) on a QM9 batch, warm
(calls back to back, minimum over rounds, us per call): forward under
no_grad, forward with autograd recording, forward+backward (the backward of
one layer, its parameters' AccumulateGrads included), each with gnnc's ops
real and stubbed (_cached.StubbedOps: what the layer costs beyond its ops,
its Python and PyTorch's autograd); nn.Linear(64, 64)'s forward+backward
beside them for scale. Runs on the CPU too (the ops stubbed: the
difference between two trees' Python is the same there).
    python bench/probes/host/gine_layer_host.py QM9_DIR [--device cuda] [--batch 64]"""
import argparse, os, pathlib, sys, time
os.environ.setdefault("GNNC_JIT", "sync")
sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import torch  # noqa: E402
import gine as G  # noqa: E402
from _cached import StubbedOps  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("dataset", type=pathlib.Path)
ap.add_argument("--device", default="cpu")
ap.add_argument("--batch", type=int, default=64)
ap.add_argument("--calls", type=int, default=300)
ap.add_argument("--rounds", type=int, default=7)
args = ap.parse_args()
dev = torch.device(args.device)
sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
_, model, x, ei, ea = G.probe_setup(args.dataset, dev, args.batch)
conv = model.convs[1]
h = torch.randn(x.size(0), 64, device=dev, requires_grad=True)
g = torch.ones(x.size(0), 64, device=dev)
params = list(conv.parameters())
lin = torch.nn.Linear(64, 64).to(dev)


def best(f):
    for _ in range(30):
        f()
    out = float("inf")
    for _ in range(args.rounds):
        sync()
        t = time.perf_counter()
        for _ in range(args.calls):
            f()
        out = min(out, (time.perf_counter() - t) / args.calls * 1e6)
        sync()
    return out


def fwd_nograd():
    with torch.no_grad():
        conv(h, ei, ea)


def fwd():
    conv(h, ei, ea)


def fwd_bwd():
    for p in params:
        p.grad = None
    h.grad = None
    conv(h, ei, ea).backward(g)


def linear():
    for p in lin.parameters():
        p.grad = None
    h.grad = None
    lin(h).backward(g)


for _ in range(3):
    fwd_bwd()
print(f"device {torch.cuda.get_device_name(dev) if dev.type == 'cuda' else 'cpu'}; "
      f"{x.size(0)} nodes, {ei.size(1)} edges; host us per call")
rows = [("forward, no_grad", fwd_nograd), ("forward", fwd), ("forward+backward", fwd_bwd)]
for stub in ((False, True) if dev.type == "cuda" else (True,)):
    for name, f in rows:
        if stub:
            with StubbedOps():
                us = best(f)
        else:
            us = best(f)
        print(f"{name:18s} {'ops stubbed' if stub else 'ops real':12s} {us:8.1f}")
print(f"{'nn.Linear fwd+bwd':31s} {best(linear):8.1f}")
