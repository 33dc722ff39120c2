#!/usr/bin/env python3
"""GCNConv and SAGEConv forward+backward on one large random graph (device
time, CUDA events, median of 10 after 3), then a torch.profiler table of
the CUDA kernels of SAGEConv's steps: where a whole-layer gnn function
(matmuls inside) spends its device time against PyTorch's linear maps.

    python large.py [--nodes 180000 --edges 2000000 --cin 128 --cout 256]
                    [--layers gcn,sage] [--no-input-grad] [--rows 14]

--no-input-grad: x needs no gradient, as a first layer's features.
--autocast bfloat16|float16: the step under torch.autocast of that type
(the layers' functions in it, weight gradients by half GEMMs over all rows).
"""
import argparse, os, statistics
os.environ.setdefault("GNNC_JIT", "sync")
import torch
import gnnc.nn

ap = argparse.ArgumentParser()
ap.add_argument("--nodes", type=int, default=180000)
ap.add_argument("--edges", type=int, default=2000000)
ap.add_argument("--cin", type=int, default=128)
ap.add_argument("--cout", type=int, default=256)
ap.add_argument("--profile", action="store_true")
ap.add_argument("--layers", default="gcn,sage")
ap.add_argument("--no-input-grad", action="store_true")
ap.add_argument("--rows", type=int, default=14)
ap.add_argument("--autocast", choices=["bfloat16", "float16"])
args = ap.parse_args()
dev = torch.device("cuda")
torch.manual_seed(0)
ei = torch.randint(0, args.nodes, (2, args.edges), device=dev)
x = torch.randn(args.nodes, args.cin, device=dev, requires_grad=not args.no_input_grad)
make = {"gcn": gnnc.nn.GCNConv, "sage": gnnc.nn.SAGEConv}
layers = {k: make[k](args.cin, args.cout).to(dev) for k in args.layers.split(",")}
for name, m in layers.items():
    dy = torch.randn(args.nodes, args.cout, device=dev)

    def step():
        with torch.autocast("cuda", dtype=getattr(torch, args.autocast or "float32"),
                            enabled=args.autocast is not None):
            y = m(x, ei)
        y.backward(dy.to(y.dtype))
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    ts = []
    for _ in range(10):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); step(); b.record(); b.synchronize()
        ts.append(a.elapsed_time(b))
    print(f"{name} fwd+bwd {statistics.median(ts):.3f} ms", flush=True)
    if args.profile:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
            for _ in range(5):
                step()
            torch.cuda.synchronize()
        print(p.key_averages().table(sort_by="self_cuda_time_total", row_limit=args.rows), flush=True)
