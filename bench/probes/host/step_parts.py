"""Where a gnnc.nn layer's forward+backward step spends host time (issue
28), on the 1,000-node probe graph: per step, the whole step
(`layer(x, ei).sum().backward()`), the time inside gnnc's autograd
Function's forward and backward (_core._Step) and inside its two ops
(torch.ops.gnnc.call, call_backward), the step with the ops stubbed
(_cached.StubbedOps), and nn.Linear's step beside it; with the backward on
PyTorch's device thread (default) and on the calling thread.
    python bench/probes/host/step_parts.py [layers...]"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from _cached import StubbedOps, graph, per_call  # noqa: E402
import torch  # noqa: E402
import nn_layers as B  # noqa: E402
import gnnc._core as core  # noqa: E402

n, c, ei, x = graph("cuda")
xg = x.clone().requires_grad_()
spent = {}


def timed(label, f):
    def g(*a, **k):
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            spent[label] = spent.get(label, 0.0) + time.perf_counter() - t
    return g


fwd, bwd = core._Step.forward, core._Step.backward
ns = torch.ops.gnnc
real_call, real_bwd = ns.call, ns.call_backward
lin = torch.nn.Linear(c, c).cuda()
K = 500
for threaded in (True, False):
    torch.autograd.set_multithreading_enabled(threaded)
    where = "device thread" if threaded else "calling thread"
    print(f"== backward on the {where}; Linear fwd+bwd "
          f"{per_call(lambda: lin(xg).sum().backward(), K):.1f} us", flush=True)
    for name in sys.argv[1:] or ["gcn", "gin", "gat"]:
        ours, _ = B.pair(name, c, "cuda")

        def step():
            ours(xg, ei).sum().backward()
        whole = per_call(step, K)
        core._Step.forward = staticmethod(timed("Function.forward", fwd))
        core._Step.backward = staticmethod(timed("Function.backward", bwd))
        ns.call, ns.call_backward = timed("op", real_call), timed("op backward", real_bwd)
        try:
            per_call(step, 20, 0)
            spent.clear()
            instrumented = per_call(step, K, 0)
            parts = {k: v / K * 1e6 for k, v in spent.items()}
        finally:
            core._Step.forward, core._Step.backward = staticmethod(fwd), staticmethod(bwd)
            ns.call, ns.call_backward = real_call, real_bwd
        with StubbedOps():
            stubbed = per_call(step, K)
        with torch.no_grad():
            forward = per_call(lambda: ours(x, ei), K)
        print(f"{name}: step {whole:.1f} us (instrumented {instrumented:.1f}); stubbed ops "
              f"{stubbed:.1f}; forward no_grad {forward:.1f}; inside: "
              + ", ".join(f"{k} {v:.1f}" for k, v in sorted(parts.items())), flush=True)
