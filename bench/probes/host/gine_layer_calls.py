"""Host time of each GINE layer call in bench/gine.py's training step, by
the layer's place in the model (session 75's segments put layer 0's
forward near 200 us against 100-130 for layers 1 and 2): the whole call,
the graph lookup (_GraphCache.get) and the op through autograd
(_apply_step) per place, and the layer's backward op (_Step.backward, on
the autograd engine's thread), medians over the steps (us; a
synchronisation before and after every step, as bench/gine.py times it);
then, over 5
profiled steps (torch.profiler), the CUDA runtime and driver calls inside
each layer's forward call by name (a replayed run is one cudaGraphLaunch;
a run launched step by step is one launch per kernel).
    python bench/probes/host/gine_layer_calls.py QM9_DIR [--steps 200]"""
import argparse, os, pathlib, statistics, sys, time
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gine as G
from gnnc import _core

ap = argparse.ArgumentParser()
ap.add_argument("dataset", type=pathlib.Path)
ap.add_argument("--steps", type=int, default=200)
args = ap.parse_args()
dev = torch.device("cuda")
pyg, ours, x, ei, ea = G.probe_setup(args.dataset, dev)
now = time.perf_counter_ns
current = {"place": None}
spans = {}


def add(what, ns):
    spans.setdefault((current["place"], what), []).append(ns)


get, apply = _core._GraphCache.get, _core._apply_step


def timed_get(self, *a, **k):
    t0 = now()
    try:
        return get(self, *a, **k)
    finally:
        add("lookup", now() - t0)


def timed_apply(*a, **k):
    t0 = now()
    try:
        return apply(*a, **k)
    finally:
        add("apply", now() - t0)


_core._GraphCache.get = timed_get
_core._apply_step = timed_apply

# Each layer's backward op (_Step.backward on the autograd engine's thread:
# the gnnc::call_backward and its Python), by its order in the step's
# backward (layer 2 first).
step_backward = _core._Step.backward
backward_order = []


def timed_backward(ctx, *grads):
    t0 = now()
    try:
        return step_backward(ctx, *grads)
    finally:
        backward_order.append(now() - t0)


_core._Step.backward = staticmethod(timed_backward)


def forward(m, profiling=False):
    """Net.forward, each layer call stamped (no module hooks: a hook makes
    a gnnc.nn layer leave its plan, _plan.py _stands)."""
    h = m.encoder(x)
    for i, conv in enumerate(m.convs):
        current["place"] = i
        rf = torch.autograd.profiler.record_function(f"conv{i}") if profiling else None
        if rf is not None:
            rf.__enter__()
        t0 = now()
        a = conv(h, ei, ea)
        add("call", now() - t0)
        if rf is not None:
            rf.__exit__(None, None, None)
        current["place"] = None
        h = torch.relu(a) if i < len(m.convs) - 1 else a
    return h


params = list(ours.parameters())
for s in range(args.steps + 20):
    if s == 20:
        spans.clear()
    for p in params:
        p.grad = None
    torch.cuda.synchronize()
    backward_order.clear()
    forward(ours).square().mean().backward()
    torch.cuda.synchronize()
    for i, ns in enumerate(reversed(backward_order)):
        current["place"] = i
        add("backward", ns)
    current["place"] = None
print(f"device {torch.cuda.get_device_name()}; us, medians of {args.steps} steps")
print("| layer | call | lookup | apply | rest | backward op |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for i in range(len(ours.convs)):
    m = {w: statistics.median(spans.get((i, w), [0])) / 1e3
         for w in ("call", "lookup", "apply", "backward")}
    print(f"| {i} | {m['call']:.1f} | {m['lookup']:.1f} | {m['apply']:.1f} | "
          f"{m['call'] - m['lookup'] - m['apply']:.1f} | {m['backward']:.1f} |")
other = {k: v for k, v in spans.items() if k[0] is None}
for (place, what), v in sorted(other.items(), key=str):
    print(f"outside a layer call: {what} x{len(v)}, median {statistics.median(v) / 1e3:.1f} us")

from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for s in range(5):
        for p in params:
            p.grad = None
        torch.cuda.synchronize()
        forward(ours, True).square().mean().backward()
        torch.cuda.synchronize()
events = list(prof.events())
ranges = [e for e in events if e.name.startswith("conv") and e.name[4:].isdigit()]
calls = [e for e in events if e.name.startswith(("cuda", "cu")) and "Launch" in e.name
         or e.name.startswith(("cudaMalloc", "cudaFree", "cudaEvent", "cudaStream", "cudaMemcpy", "cudaMemset"))]
for i in range(len(ours.convs)):
    mine = [r for r in ranges if r.name == f"conv{i}"]
    counts = {}
    for r in mine:
        a, b = r.time_range.start, r.time_range.end
        for c in calls:
            if a <= c.time_range.start <= b:
                counts[c.name] = counts.get(c.name, 0) + 1
    print(f"conv{i} forward, runtime calls over {len(mine)} calls:",
          ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none")
