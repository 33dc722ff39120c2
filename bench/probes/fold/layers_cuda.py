#!/usr/bin/env python3
"""The whole-layer functions of session 28 (TransformerConv's
transformer_layer, GATConv's gat_layer, GATv2Conv's gatv2_layer, GINConv's
gin_layer, GINEConv's gine_layer) on CUDA against the same layers on the
CPU: forward and every gradient, on a small
graph with an isolated node, a self-loop and a duplicate edge. Meant to run
under compute-sanitizer (memcheck, racecheck); prints one line per case and
"N passed, N failed".

    compute-sanitizer --tool memcheck python bench/probes/fold/layers_cuda.py
"""
import os
os.environ.setdefault("GNNC_JIT", "sync")
import torch
import gnnc.nn as gnn

torch.manual_seed(0)
N, C = 9, 8
ei = torch.tensor([[0, 1, 2, 3, 1, 1, 4, 5, 6, 7, 2],
                   [1, 2, 0, 1, 1, 3, 5, 4, 1, 1, 0]])  # node 8 isolated
ea = torch.randn(ei.size(1), 3)
CASES = {
    "transformer-skip": lambda: gnn.TransformerConv(C, 4, heads=2),
    "transformer-mean-beta": lambda: gnn.TransformerConv(C, 4, heads=2, concat=False, beta=True),
    "transformer-edge-nobias": lambda: gnn.TransformerConv(C, 4, heads=2, edge_dim=3, bias=False),
    "gat-bias": lambda: gnn.GATConv(C, 4, heads=2),
    "gat-edge-mean-res": lambda: gnn.GATConv(C, 4, heads=2, edge_dim=3, concat=False,
                                             residual=True),
    "gatv2-shared-nobias": lambda: gnn.GATv2Conv(C, 4, heads=2, share_weights=True,
                                                 bias=False),
    "gatv2-edge": lambda: gnn.GATv2Conv(C, 4, heads=2, edge_dim=3),
    "gin-linear-project-first": lambda: gnn.GINConv(torch.nn.Linear(C, 5), train_eps=True),
    "gin-mlp": lambda: gnn.GINConv(torch.nn.Sequential(torch.nn.Linear(C, 16), torch.nn.ReLU(),
                                                       torch.nn.Linear(16, C))),
    "gine-mlp": lambda: gnn.GINEConv(torch.nn.Sequential(torch.nn.Linear(C, 16), torch.nn.ReLU(),
                                                         torch.nn.Linear(16, C)), edge_dim=3,
                                     train_eps=True),
}
passed = failed = 0
for name, make in CASES.items():
    torch.manual_seed(1)
    cpu = make().double()
    dev = make().double().cuda()
    dev.load_state_dict(cpu.state_dict())
    x = torch.randn(N, C, dtype=torch.float64)
    results = []
    for layer, d in ((cpu, "cpu"), (dev, "cuda")):
        xx = x.to(d).detach().clone().requires_grad_()
        args = (ea.double().to(d),) if "edge" in name or "gine" in name else ()
        out = layer(xx, ei.to(d), *args)
        out.square().sum().backward()
        results.append([out.detach().cpu(), xx.grad.cpu()] +
                       [p.grad.cpu() for p in layer.parameters()])
    torch.cuda.synchronize()
    ok = all(torch.allclose(a, b, rtol=1e-9, atol=1e-9) for a, b in zip(*results))
    passed += ok
    failed += not ok
    print(f"{name}: {'PASS' if ok else 'FAIL'}", flush=True)
print(f"{passed} passed, {failed} failed")
