"""One host-bound loop for a sampling profiler (py-spy --native): calls one
thing on the probe graph of _cached.py (1,000 nodes, 64 channels, cached
on the GPU) for SECONDS seconds, then prints the host us per call.
    python bench/probes/host/spin.py MODE [LAYER] [SECONDS]
MODE: fwd (the layer's forward under no_grad), op (its first gnnc op called
directly), step (forward+backward through autograd), gcn2 (2-layer GCN
forward+backward on the same graph)."""
import os, sys, time
sys.path.insert(0, os.path.dirname(__file__))
from _cached import graph, op_calls  # noqa: E402
import torch  # noqa: E402
import nn_layers as B  # noqa: E402

mode = sys.argv[1]
name = sys.argv[2] if len(sys.argv) > 2 else "gcn"
seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 4.0
n, c, ei, x = graph("cuda")
xg = x.clone().requires_grad_()
ours, _ = B.pair(name, c, "cuda")
if mode == "fwd":
    def f():
        with torch.no_grad():
            ours(x, ei)
elif mode == "op":
    with torch.no_grad():
        fn, edge_index, nn_, tensors, handle = op_calls(lambda: ours(x, ei))[0]
    args = (fn._target, edge_index, nn_, -1, handle, list(tensors))
    def f():
        torch.ops.gnnc.call(*args)
elif mode == "step":
    def f():
        ours(xg, ei).sum().backward()
elif mode == "gcn2":
    import gnnc.nn
    l1, l2 = gnnc.nn.GCNConv(c, c).cuda(), gnnc.nn.GCNConv(c, c).cuda()
    def f():
        l2(l1(xg, ei).relu(), ei).sum().backward()
else:
    raise SystemExit(f"unknown mode {mode}")
for _ in range(50):
    f()
torch.cuda.synchronize()
calls, t0 = 0, time.perf_counter()
while time.perf_counter() - t0 < seconds:
    for _ in range(50):
        f()
    calls += 50
    torch.cuda.synchronize()
print(f"{mode} {name}: {(time.perf_counter() - t0) / calls * 1e6:.1f} us per call")
