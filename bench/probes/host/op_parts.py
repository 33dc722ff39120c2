"""Where a gnnc.nn layer's training forward spends host time beyond its
inference forward (issue 28; session 43: on the GPU machine SAGE mean's
forward cost 153 us with autograd against 72 us under no_grad): per call,
the layer under no_grad and with autograd, its gnnc ops called directly
(the inference op, the training op, the backward op), the autograd step
(_Step.apply) with the same arguments, and the JIT resolver's calls in the
steady state (each one a trip into Python).
    python bench/probes/host/op_parts.py [layers...]"""
import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from _cached import graph, per_call  # noqa: E402  (sets GNNC_JIT, sys.path)
import torch  # noqa: E402
import nn_layers as B  # noqa: E402
import gnnc._core as core  # noqa: E402

dev = "cuda"
n, c, ei, x = graph(dev)
xg = x.clone().requires_grad_()
dy = torch.randn(n, c, device=dev)

resolves = [0]
def counting(target, g):
    resolves[0] += 1
    return core._resolve(target, g)
core._C.set_resolver(counting)

ns = torch.ops.gnnc
real_call, real_bwd = ns.call, ns.call_backward


def record(run):
    calls = {"call": [], "call_backward": []}
    def call(*a):
        calls["call"].append(a)
        return real_call(*a)
    def bwd(*a):
        calls["call_backward"].append(a)
        return real_bwd(*a)
    ns.call, ns.call_backward = call, bwd
    try:
        run()
    finally:
        ns.call, ns.call_backward = real_call, real_bwd
    return calls


for name in sys.argv[1:] or ["sage_mean", "gin", "gcn"]:
    ours, _ = B.pair(name, c, dev)
    for _ in range(30):
        (ours(xg, ei) * dy).sum().backward()
    torch.cuda.synchronize()
    with torch.no_grad():
        inf = record(lambda: ours(x, ei))["call"]
    tr = record(lambda: (ours(xg, ei) * dy).sum().backward())
    r0 = resolves[0]
    with torch.no_grad():
        t_ng = per_call(lambda: ours(x, ei))
    t_ag = per_call(lambda: ours(xg, ei))
    t_step = per_call(lambda: (ours(xg, ei) * dy).sum().backward(), k=200)
    t_inf = [per_call(lambda a=a: real_call(*a)) for a in inf]
    t_tr = [per_call(lambda a=a: real_call(*a)) for a in tr["call"]]
    t_bw = [per_call(lambda a=a: real_bwd(*a)) for a in tr["call_backward"]]
    lin = torch.nn.Linear(c, c).to(dev)
    t_lin = per_call(lambda: (lin(xg) * dy).sum().backward(), k=200)
    print(f"{name}: layer no_grad {t_ng:.1f} us, autograd forward {t_ag:.1f}, step {t_step:.1f} "
          f"(a Linear's step {t_lin:.1f}); ops alone: inference {[round(v, 1) for v in t_inf]}, "
          f"training forward {[round(v, 1) for v in t_tr]}, backward {[round(v, 1) for v in t_bw]}; "
          f"inputs to the training op {[len(a[-1]) for a in tr['call']]}, outputs "
          f"{[len(real_call(*a)) for a in tr['call']]}; resolver calls in the timed loops: "
          f"{resolves[0] - r0}", flush=True)
