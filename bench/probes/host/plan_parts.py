"""Where a planned GCNConv forward call's host time goes (issue 28), with
gnnc's ops stubbed (_cached.StubbedOps), on the 1,000-node probe graph: the
layer call, the plan's run, and its parts (the checks every plan makes, the
graph derived with its content check, the cached graph's lookup, the
function's choice, Function._run with the op stubbed). Minimum over rounds,
us per call. Runs on the CPU (the default) or on CUDA.
    python bench/probes/host/plan_parts.py [--device cpu|cuda]"""
import argparse, os, sys, time
sys.path.insert(0, os.path.dirname(__file__))
from _cached import StubbedOps, graph  # noqa: E402
import torch  # noqa: E402
import gnnc.nn as gnn  # noqa: E402
from gnnc import _core  # noqa: E402
from gnnc.nn import _common, conv  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--device", default="cpu")
ap.add_argument("--calls", type=int, default=300)
args = ap.parse_args()


def best(f, rounds=15):
    for _ in range(20):
        f()
    out = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(args.calls):
            f()
        out = min(out, (time.perf_counter() - t) / args.calls * 1e6)
    return out


n, c, ei, x = graph(args.device)
m = gnn.GCNConv(c, c).to(args.device)
with StubbedOps(), torch.no_grad():
    m(x, ei)  # the full call that keeps the plan
    p = m.__dict__["_gnnc_plan"]
    dt = x.dtype
    aug, weights, w, fold = conv.gcn_graph(m, ei, n, dt, None)
    tensors = [x, m.lin.weight, m.bias] + ([] if w is None else [w])
    config = p.head + (False, weights, True, fold, False)
    fn = _common.function_for("gcn_model", config, tensors)
    handle = _core._graphs.get(aug, n).handle
    parts = [
        ("the layer call", lambda: m(x, ei)),
        ("plan.run", lambda: p.run(m, x, ei)),
        ("  the checks every plan makes (_stands)", lambda: p._stands(m, x, ei)),
        ("  the graph derived, its content checked (gcn_graph)",
         lambda: conv.gcn_graph(m, ei, n, dt, None)),
        ("  the cached graph's lookup", lambda: _core._graphs.get(aug, n)),
        ("  the function's choice (function_for)",
         lambda: _common.function_for("gcn_model", config, tensors)),
        ("  Function._run, the op stubbed", lambda: fn._run(aug, n, tensors, handle)),
    ]
    for name, f in parts:
        print(f"{name:56s} {best(f):6.2f} us", flush=True)
