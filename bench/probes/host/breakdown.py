"""Where a gnnc.nn layer's forward spends host time (issue 28): per-call
wall time of the layer, of its gnnc op alone, of F.linear and of an empty
dispatcher call, and a cProfile of the layer's Python. Run on a GPU machine:
    python bench/probes/host/breakdown.py [layers...]"""
import cProfile, io, os, pstats, sys
sys.path.insert(0, os.path.dirname(__file__))
from _cached import graph, op_calls, per_call  # noqa: E402  (sets GNNC_JIT, sys.path)
import torch  # noqa: E402
import nn_layers as B  # noqa: E402
import gnnc._core as core  # noqa: E402

dev = "cuda"
n, c, ei, x = graph(dev)


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
        ops = []
        for fn, edge_index, nn_, tensors, handle in op_calls(lambda: ours(x, ei)):
            args = (fn._target, edge_index, nn_, -1, handle, list(tensors))
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
