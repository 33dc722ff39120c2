"""Session 32, call 7: the bipartite layers under torch.autocast(bfloat16)
on CUDA against the same layers in float32, beside PyG's layer (same
weights) under the same autocast: the output's dtype must be PyG's and the
relative errors of the output and of both sides' gradients at most twice
PyG's (or 1 %), more sources than destinations and fewer."""
import sys

import torch
import gnnc.nn as gnn
import torch_geometric.nn as pyg_nn

sys.path.insert(0, "python/tests")
import _parity  # noqa: E402

torch.manual_seed(0)
dev = torch.device("cuda")


def run(layer, xs, xd, ei):
    ref = layer((xs, xd), ei)
    g = torch.autograd.grad(ref.square().sum(), (xs, xd))
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = layer((xs, xd), ei)
    h = torch.autograd.grad(out.float().square().sum(), (xs, xd))
    rel = lambda a, b: ((a.float() - b).norm() / b.norm().clamp(min=1e-12)).item()
    return out.dtype, (rel(out, ref), rel(h[0], g[0]), rel(h[1], g[1]))


results = []
for name, kw in [("SAGEConv", {}), ("SAGEConv", dict(aggr="max")), ("GINConv", None),
                 ("GATConv", dict(heads=2)), ("GATv2Conv", dict(heads=2)),
                 ("TransformerConv", dict(heads=2))]:
    for ns, nd in [(5000, 700), (300, 4000)]:
        if name == "GINConv":
            mlp = lambda: torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU(),  # noqa: E731
                                              torch.nn.Linear(32, 16))
            ours, pyg = gnn.GINConv(mlp()), pyg_nn.GINConv(mlp())
        else:
            ours = getattr(gnn, name)((32, 32), 16, **kw)
            pyg = getattr(pyg_nn, name)((32, 32), 16, **kw)
        ours, pyg = _parity.same_weights(ours, pyg, torch.float32)
        ours, pyg = ours.to(dev), pyg.to(dev)
        e = 20000
        ei = torch.stack([torch.randint(0, ns, (e,)), torch.randint(0, nd, (e,))]).to(dev)
        xs = torch.randn(ns, 32, device=dev, requires_grad=True)
        xd = torch.randn(nd, 32, device=dev, requires_grad=True)
        dt, r = run(ours, xs, xd, ei)
        pdt, pr = run(pyg, xs, xd, ei)
        ok = dt == pdt and all(a <= max(2 * b, 0.01) for a, b in zip(r, pr))
        results.append(ok)
        print(f"{'ok  ' if ok else 'FAIL'} {name} {kw} ns={ns} nd={nd} out {dt} (PyG {pdt}) "
              f"rel err out/dx_src/dx_dst gnnc {r[0]:.4f} {r[1]:.4f} {r[2]:.4f} "
              f"PyG {pr[0]:.4f} {pr[1]:.4f} {pr[2]:.4f}", flush=True)
print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
