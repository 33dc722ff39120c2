"""What the host probes share (breakdown.py, ../hostprof/): a graph of 1,000
nodes and 10,000 edges cached on the GPU with 64-channel features, host time
per call, and the arguments of a layer's gnnc op calls."""
import os
import statistics
import sys
import time

os.environ.setdefault("GNNC_JIT", "sync")
import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gnnc._core as core  # noqa: E402


def graph(dev="cuda", n=1000, e=10000, c=64):
    """(n, c, edge_index, x), seeded."""
    torch.manual_seed(0)
    return n, c, torch.randint(0, n, (2, e), device=dev), torch.randn(n, c, device=dev)


def per_call(f, k=300, warmup=20):
    """Host microseconds per call of `f` over `k` calls (the device drained
    before and after, where there is one)."""
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    for _ in range(warmup):
        f()
    sync()
    t = time.perf_counter()
    for _ in range(k):
        f()
    h = (time.perf_counter() - t) / k * 1e6
    sync()
    return h


def print_medians(res: dict) -> None:
    """One line per (what, variant) of `res` (lists of host us per call):
    the median and every round's figure."""
    for (what, tag), v in sorted(res.items()):
        print(f"host {what:8s} {tag}: median {statistics.median(v):7.1f} us  "
              f"({' '.join(f'{t:.1f}' for t in v)})", flush=True)


def op_calls(run):
    """The gnnc op calls `run()` makes, as (function, edge_index, num_nodes,
    tensors, graph handle), recorded for that one call only (a recorder left
    in place keeps every call's tensors alive)."""
    calls = []
    # (Function._launch: every layer call reaches it, through Function._run
    # or, a planned call, directly.)
    orig = core.Function._launch

    def rec(self, edge_index, num_nodes, tensors, graph, trains):
        calls.append((self, edge_index, num_nodes, tensors, graph))
        return orig(self, edge_index, num_nodes, tensors, graph, trains)
    core.Function._launch = rec
    try:
        run()
    finally:
        core.Function._launch = orig
    return calls


class StubbedOps:
    """gnnc's ops (torch.ops.gnnc.call, call_backward) replaced by stubs
    that return new tensors shaped like the outputs of their first real call
    per (op, target, graph) (uninitialised, allocated per call as the op
    allocates its own): what a layer call costs beyond its ops is then its
    Python and PyTorch's dispatch. (The memoised tensors themselves were
    returned until session 78: autograd's AccumulateGrad then copied every
    parameter gradient, since the memo held a reference, which the real op's
    gradients never cost: bench/probes/host/grad_steal.py.)
    `with StubbedOps():` (the memo kept across uses)."""

    def __init__(self):
        self.ns = torch.ops.gnnc
        self.real = {"call": self.ns.call, "call_backward": self.ns.call_backward}
        self.memo = {}

    def _stub(self, kind):
        def f(target, edge_index, num_nodes, graph, *rest):
            key = (kind, target, graph)
            if key not in self.memo:
                self.memo[key] = self.real[kind](target, edge_index, num_nodes, graph,
                                                 *rest)
            return [torch.empty_like(t) for t in self.memo[key]]
        return f

    def __enter__(self):
        self.ns.call, self.ns.call_backward = self._stub("call"), self._stub("call_backward")
        return self

    def __exit__(self, *exc):
        self.ns.call, self.ns.call_backward = self.real["call"], self.real["call_backward"]
