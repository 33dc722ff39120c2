"""Issue 28's host-time targets beside PyTorch's own floor on the same host,
one process, measured as bench/nn_layers.py measures the targets
(host_per_call: the queueing loop's microseconds per call, the device
drained before and after; its GPU time is negligible).

Per call (nn_layers.py's 1,000-node graph, 64 channels; target 25 us for a
layer's forward):
  x + 1, nn.Linear's forward, a trivial Python autograd.Function's forward
  (one op inside: what PyTorch's stable ABI, which has no C++ autograd,
  leaves an op layer at the least), each under no_grad and recording;
  gnnc's GCNConv beside them.
Per step, a 2-layer network on Cora forward+backward (target 150 us for a
GCN; nn_layers.py's `gcn2_cora_fwd_bwd` step: relu(l1(x)), l2, .sum(),
.backward()):
  gnnc 2 x GCNConv, gnnc models.GCN, PyG 2 x GCNConv;
  the floor: the two layers as nn.Linear (GCN's parameters, no graph);
  the stable-ABI floor: the same with each Linear's output passed through a
  trivial Python autograd.Function (one Python backward node per layer, as
  every op registered through the stable ABI has).
Each step with autograd's backward on its device thread (PyTorch's default
for CUDA) and on the calling thread
(torch.autograd.set_multithreading_enabled(False)).

    python bench/probes/host/issue28_floors.py [--calls 2000]"""
import argparse
import os
import pathlib
import sys

os.environ.setdefault("GNNC_JIT", "sync")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
import torch  # noqa: E402

import nn_layers as B  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--calls", type=int, default=2000)
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--device", default="cuda",
                help="cpu: checks that it runs (host_per_call then needs CUDA stubbed)")
args = ap.parse_args()
dev = torch.device(args.device)


class _Trivial(torch.autograd.Function):
    """One op forward, one op backward, Python around both: the least a
    layer registered through the stable ABI runs per call."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g.clone()


def best(f, calls):
    """The least host us per call over the rounds (B.host_per_call)."""
    return min(B.host_per_call(f, calls)[0] for _ in range(args.rounds))


def no_grad(f):
    def g():
        with torch.no_grad():
            f()
    return g


print(f"device {torch.cuda.get_device_name() if dev.type == 'cuda' else 'cpu'}", flush=True)
gen = torch.Generator().manual_seed(3)
n, e, c = 1000, 10000, 64
ei = torch.randint(0, n, (2, e), generator=gen).to(dev)
x = torch.randn(n, c, generator=gen).to(dev)
xg = x.clone().requires_grad_()
lin = torch.nn.Linear(c, c).to(dev)
ours, pyg = B.pair("gcn", c, dev)
per_call = [
    ("x + 1", lambda: x + 1, lambda: xg + 1),
    ("nn.Linear forward", lambda: lin(x), lambda: lin(xg)),
    ("trivial autograd.Function", lambda: _Trivial.apply(x), lambda: _Trivial.apply(xg)),
    ("gnnc GCNConv forward", lambda: ours(x, ei), lambda: ours(xg, ei)),
    ("PyG GCNConv forward", lambda: pyg(x, ei), lambda: pyg(xg, ei)),
]
print("\nper call, host us (target: a gnnc layer's forward <= 25)")
print("| what | no_grad | recording |")
print("| --- | ---: | ---: |")
for name, f0, f1 in per_call:
    print(f"| {name} | {best(no_grad(f0), args.calls):.1f} | {best(f1, args.calls):.1f} |",
          flush=True)

import gnnc.nn  # noqa: E402
import torch_geometric.nn as pygnn  # noqa: E402

ei, n = B.load_graph(pathlib.Path(__file__).resolve().parents[3] / "data" / "cora", dev)
meta = dict(l.split(maxsplit=1) for l in open(
    pathlib.Path(__file__).resolve().parents[3] / "data" / "cora" / "meta.txt"))
f, k = int(meta["features"]), int(meta["classes"])
xc = torch.randn(n, f, device=dev)


def layers_step(l1, l2, wrap=None):
    def step():
        h = l1(xc, ei) if wrap is None else wrap(l1(xc))
        h = torch.relu(h)
        y = l2(h, ei) if wrap is None else wrap(l2(h))
        y.sum().backward()
    return step


def model_step(model):
    def step():
        model(xc, ei).sum().backward()
    return step


torch.manual_seed(0)
steps = [
    ("gnnc 2 x GCNConv", layers_step(gnnc.nn.GCNConv(f, 16).to(dev), gnnc.nn.GCNConv(16, k).to(dev))),
    ("gnnc models.GCN", model_step(gnnc.nn.models.GCN(f, 16, 2, k).to(dev))),
    ("PyG 2 x GCNConv", layers_step(pygnn.GCNConv(f, 16).to(dev), pygnn.GCNConv(16, k).to(dev))),
    ("floor: 2 x nn.Linear", layers_step(torch.nn.Linear(f, 16).to(dev),
                                          torch.nn.Linear(16, k).to(dev), wrap=lambda h: h)),
    ("stable-ABI floor: 2 x (nn.Linear + trivial autograd.Function)",
     layers_step(torch.nn.Linear(f, 16).to(dev), torch.nn.Linear(16, k).to(dev),
                 wrap=_Trivial.apply)),
]
print("\n2-layer network on Cora, forward+backward, host us per step (target: GCN <= 150)")
print("| what | backward on the device thread | on the calling thread |")
print("| --- | ---: | ---: |")
for name, step in steps:
    row = []
    for threads in (True, False):
        torch.autograd.set_multithreading_enabled(threads)
        row.append(best(step, args.calls // 4))
    torch.autograd.set_multithreading_enabled(True)
    print(f"| {name} | {row[0]:.1f} | {row[1]:.1f} |", flush=True)
