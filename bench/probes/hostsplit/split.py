#!/usr/bin/env python3
"""Where a gnnc.nn layer call's host time goes: per layer, the host time per
call (K calls queued, one synchronisation) of forward (no_grad) and
forward+backward, split into gnnc's ops (torch.ops.gnnc.call /
call_backward, timed around each call) and everything else (the layer's
Python, the linear maps, autograd), with PyG's totals beside them; then
cProfile tables of forward+backward for the layers named in --profile.

    python split.py [--device cuda] [--nodes 1000 --edges 10000 --channels 64]
        [--layers gin,gcn,...] [--profile gin,sage]
"""
import argparse, cProfile, io, os, pstats, time
os.environ.setdefault("GNNC_JIT", "sync")
import torch

ap = argparse.ArgumentParser()
ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
ap.add_argument("--nodes", type=int, default=1000)
ap.add_argument("--edges", type=int, default=10000)
ap.add_argument("--channels", type=int, default=64)
ap.add_argument("--calls", type=int, default=2000)
ap.add_argument("--layers", default="gin,gcn,sage,sagemax,gat,gatv2,tr,agnn")
ap.add_argument("--profile", default="")
ap.add_argument("--no-pyg", action="store_true")
ap.add_argument("--torch-profile", default="", help="layers to run under torch.profiler")
args = ap.parse_args()

import gnnc.nn
dev = torch.device(args.device)
torch.manual_seed(0)
n, e, c = args.nodes, args.edges, args.channels
ei = torch.randint(0, n, (2, e), device=dev)
x = torch.randn(n, c, device=dev)
xg = x.clone().requires_grad_()
ns = torch.ops.gnnc
orig_call, orig_bwd = ns.call, ns.call_backward
acc = {"call": 0.0, "bwd": 0.0}


def call(*a):
    t = time.perf_counter(); r = orig_call(*a); acc["call"] += time.perf_counter() - t
    return r


def bwd(*a):
    t = time.perf_counter(); r = orig_bwd(*a); acc["bwd"] += time.perf_counter() - t
    return r


ns.call, ns.call_backward = call, bwd


def make(lib, name):
    return {"gin": lambda: lib.GINConv(torch.nn.Linear(c, c)),
            "gcn": lambda: lib.GCNConv(c, c),
            "gcnmodel": lambda: (lib.models.GCN(c, c, num_layers=1) if hasattr(lib, "models")
                                 else lib.GCNConv(c, c)),
            "sage": lambda: lib.SAGEConv(c, c),
            "sagemax": lambda: lib.SAGEConv(c, c, aggr="max"),
            "gat": lambda: lib.GATConv(c, c // 4, heads=4),
            "gatv2": lambda: lib.GATv2Conv(c, c // 4, heads=4),
            "tr": lambda: lib.TransformerConv(c, c // 4, heads=4),
            "agnn": lambda: lib.AGNNConv()}[name]().to(dev)


def sync():
    if dev.type == "cuda":
        torch.cuda.synchronize()


def per_call(f, k):
    for _ in range(50):
        f()
    sync()
    best = None
    for _ in range(5):
        acc["call"] = acc["bwd"] = 0.0
        t = time.perf_counter()
        for _ in range(k):
            f()
        sync()
        row = ((time.perf_counter() - t) / k * 1e6, acc["call"] / k * 1e6, acc["bwd"] / k * 1e6)
        if best is None or row[0] < best[0]:
            best = row
    return best


def steps(m):
    def nograd():
        with torch.no_grad():
            m(x, ei)

    def fwdbwd():
        m(xg, ei).sum().backward()
    return {"fwd": nograd, "fwd+bwd": fwdbwd}


libs = [("gnnc", gnnc.nn)]
if not args.no_pyg:
    import torch_geometric.nn as pygnn
    libs.append(("pyg", pygnn))
print(f"device {dev} {torch.cuda.get_device_name(dev) if dev.type == 'cuda' else ''} "
      f"nodes {n} edges {e} channels {c}; host us per call")
for name in args.layers.split(","):
    for side, lib in libs:
        m = make(lib, name)
        for mode, f in steps(m).items():
            tot, op, opb = per_call(f, args.calls)
            extra = f" op {op:6.1f} op_bwd {opb:6.1f} rest {tot - op - opb:6.1f}" if side == "gnnc" else ""
            print(f"{name:8s} {side:5s} {mode:8s} total {tot:7.1f}{extra}", flush=True)

for name in filter(None, args.profile.split(",")):
    m = make(gnnc.nn, name)
    f = steps(m)["fwd+bwd"]
    for _ in range(50):
        f()
    sync()
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(1000):
        f()
    sync()
    pr.disable()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(30)
    print(f"== cProfile {name} fwd+bwd, 1000 steps\n{s.getvalue()}", flush=True)

for name in filter(None, args.torch_profile.split(",")):
    from torch.profiler import ProfilerActivity, profile
    for side, lib in libs:
        m = make(lib, name)
        f = steps(m)["fwd+bwd"]
        for _ in range(50):
            f()
        sync()
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.type == "cuda" else [])
        with profile(activities=acts) as prof:
            for _ in range(200):
                f()
            sync()
        print(f"== torch.profiler {side} {name} fwd+bwd, 200 steps\n"
              + prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=35), flush=True)
