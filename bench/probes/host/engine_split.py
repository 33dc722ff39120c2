"""Where a gnnc layer's backward spends its host time, on the device's
worker thread (PyTorch's default for CUDA) and on the calling thread
(`torch.autograd.set_multithreading_enabled(False)`): per call of
`out.sum().backward()` after a GCNConv forward on 1,000 x 64 CUDA features,
the time from the call to the entry of gnnc's backward (engine start and the
sum's backward), the backward's Python before the op, the op
(gnnc::call_backward), the Python after it, and from its return to the
call's return (the remaining nodes, gradient accumulation, the engine's
end). Medians in us over 400 calls; then a trivial Python autograd.Function
(x * 2) the same way, and torch.profiler's CPU table of 50 calls per mode.
    python bench/probes/host/engine_split.py"""
import statistics, time
import torch
import gnnc._core as core
import gnnc.nn

dev = "cuda"
torch.manual_seed(0)
x = torch.randn(1000, 64, device=dev, requires_grad=True)
ei = torch.randint(0, 1000, (2, 10000), device=dev)
layer = gnnc.nn.GCNConv(64, 64).to(dev)
marks = {}
orig_backward = core._Step.backward
orig_op = torch.ops.gnnc.call_backward


class _TimedOp:
    def __call__(self, *a):
        marks["op0"] = time.perf_counter()
        r = orig_op(*a)
        marks["op1"] = time.perf_counter()
        return r


def timed_backward(ctx, *grads):
    marks["enter"] = time.perf_counter()
    r = orig_backward(ctx, *grads)
    marks["leave"] = time.perf_counter()
    return r


core._Step.backward = staticmethod(timed_backward)
torch.ops.gnnc.call_backward = _TimedOp()


class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        marks["enter"] = marks["op0"] = marks["op1"] = time.perf_counter()
        r = g * 2
        marks["leave"] = time.perf_counter()
        return r


cases = {"gnnc GCNConv": lambda: layer(x, ei).sum(), "Python Function x*2": lambda: Twice.apply(x).sum()}
for name, fwd in cases.items():
    for mt in (True, False):
        with torch.autograd.set_multithreading_enabled(mt):
            parts = {k: [] for k in ("forward", "to entry", "python before op", "op",
                                     "python after op", "after return", "backward total")}
            for i in range(450):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                loss = fwd()
                t1 = time.perf_counter()
                loss.backward()
                t2 = time.perf_counter()
                if i < 50:
                    continue
                m = marks
                for k, v in (("forward", t1 - t0), ("to entry", m["enter"] - t1),
                             ("python before op", m["op0"] - m["enter"]), ("op", m["op1"] - m["op0"]),
                             ("python after op", m["leave"] - m["op1"]), ("after return", t2 - m["leave"]),
                             ("backward total", t2 - t1)):
                    parts[k].append(v * 1e6)
            print(f"{name:20s} {'worker thread ' if mt else 'calling thread'}: " +
                  ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in parts.items()), flush=True)
from torch.profiler import ProfilerActivity, profile
for mt in (True, False):
    with torch.autograd.set_multithreading_enabled(mt):
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(50):
                layer(x, ei).sum().backward()
            torch.cuda.synchronize()
    print(f"== profile, {'worker thread' if mt else 'calling thread'}, 50 calls\n" +
          prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25), flush=True)
