"""Session 51: bench/gine.py's model, forward+backward run 20 times on one
batch: the largest difference of each parameter gradient between runs
(0 where the step is deterministic) and against PyG's.
    python repeat.py QM9_DIR"""
import os, pathlib, sys
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gine as G  # noqa: E402

dev = torch.device("cuda")
pyg, ours, x, ei, ea = G.probe_setup(pathlib.Path(sys.argv[1]), dev)


def grads(m):
    m.zero_grad(set_to_none=True)
    m(x, ei, ea).square().mean().backward()
    return {n: p.grad.clone() for n, p in m.named_parameters()}


ref = grads(pyg)
first = grads(ours)
runs, vs_pyg = 0.0, 0.0
worst = ""
for _ in range(20):
    g = grads(ours)
    for n in g:
        d = (g[n] - first[n]).abs().max().item()
        if d > runs:
            runs, worst = d, n
        vs_pyg = max(vs_pyg, (g[n] - ref[n]).abs().max().item())
print(f"between runs {runs:.3g} ({worst or 'none'}), against PyG {vs_pyg:.3g}")
