"""Where a gnnc.nn layer's forward spends host time (issue 28): per-call
wall time of the layer, of its gnnc op alone, of F.linear and of an empty
dispatcher call, and a cProfile of the layer's Python. Run on a GPU machine:
    python bench/probes/host/breakdown.py [layers...]"""
import cProfile, io, os, pstats, sys, time
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import nn_layers as B
import gnnc, gnnc._core as core

dev = "cuda"
torch.manual_seed(0)
n, e, c = 1000, 10000, 64
ei = torch.randint(0, n, (2, e), device=dev)
x = torch.randn(n, c, device=dev)


def per_call(f, k=300):
    for _ in range(20):
        f()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(k):
        f()
    h = (time.perf_counter() - t) / k * 1e6
    torch.cuda.synchronize()
    return h


calls = []
orig = core.Function._apply
def rec(self, edge_index, num_nodes, tensors, graph=None):
    calls.append((self, edge_index, num_nodes, tensors, graph))
    return orig(self, edge_index, num_nodes, tensors, graph)
core.Function._apply = rec

w = torch.randn(c, c, device=dev)
print("F.linear", round(per_call(lambda: torch.nn.functional.linear(x, w)), 1))
print("x + 1", round(per_call(lambda: x + 1), 1))
print("torch.ops.aten.add", round(per_call(lambda: torch.ops.aten.add(x, x)), 1))
names = sys.argv[1:] or B.LAYERS
for name in names:
    ours, pyg = B.pair(name, c, dev)
    with torch.no_grad():
        g = per_call(lambda: ours(x, ei))
        p = per_call(lambda: pyg(x, ei))
        calls.clear(); ours(x, ei)
        ops = []
        for fn, edge_index, nn_, tensors, graph in calls:
            graph = graph if graph is not None else core._handle(edge_index, nn_)
            args = (fn._target, edge_index, nn_, graph, list(tensors))
            ops.append(per_call(lambda: torch.ops.gnnc.call(*args)))
            ops.append(per_call(lambda: core._handle(edge_index, nn_)))
    xg = x.clone().requires_grad_()
    ga = per_call(lambda: ours(xg, ei))
    pa = per_call(lambda: pyg(xg, ei))
    print(f"{name}: no_grad gnnc {g:.1f} pyg {p:.1f} | autograd gnnc {ga:.1f} pyg {pa:.1f} | "
          f"op+handle per call {[round(v, 1) for v in ops]}")
    if name in ("gcn", "gat", "gin"):
        pr = cProfile.Profile()
        with torch.no_grad():
            pr.enable()
            for _ in range(300):
                ours(x, ei)
            pr.disable()
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(18)
        print("\n".join(s.getvalue().splitlines()[4:30]))
