"""A GINE model's forward+backward on QM9 batches (bench/gine.py's model,
batch 4096, 3 layers, hidden 64): per side the step's wall time, and the
device time per kernel (torch.profiler, sorted by self CUDA time), to tell
the device's share of the step from the host's.
    python bench/probes/host/gine_kernels.py QM9_DIR"""
import os, pathlib, sys, time
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gine as G
from torch.profiler import profile, ProfilerActivity

dev = torch.device("cuda")
pyg, ours, x, ei, ea = G.probe_setup(pathlib.Path(sys.argv[1]), dev)
print(f"nodes {x.size(0)}, edges {ei.size(1)}")
for name, m in (("pyg", pyg), ("gnnc", ours)):
    params = list(m.parameters())
    steps = []
    for i in range(60):
        for p in params:
            p.grad = None
        torch.cuda.synchronize(); t0 = time.perf_counter()
        m(x, ei, ea).square().mean().backward()
        torch.cuda.synchronize(); steps.append(time.perf_counter() - t0)
    steps = sorted(steps[10:])
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            for p in params:
                p.grad = None
            m(x, ei, ea).square().mean().backward()
        torch.cuda.synchronize()
    events = prof.key_averages()
    cuda = sum(e.self_device_time_total for e in events) / 5 / 1e3
    print(f"{name}: step {steps[len(steps) // 2] * 1e3:.3f} ms (median), device "
          f"{cuda:.3f} ms per step (profiled)")
    print(events.table(sort_by="self_cuda_time_total", row_limit=18,
                       max_name_column_width=50))
