"""Where a GINE model's forward+backward spends its time on QM9 batches:
forward with autograd recording, backward alone, each synchronised; and a
torch.profiler table of the backward for both sides.
    python bench/probes/host/gine_step.py QM9_DIR"""
import os, pathlib, sys, time
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gine as G
from torch.profiler import profile, ProfilerActivity

dev = torch.device("cuda")
pyg, ours, x, ei, ea = G.probe_setup(pathlib.Path(sys.argv[1]), dev)
for name, m in (("pyg", pyg), ("gnnc", ours)):
    params = list(m.parameters())
    f, b = [], []
    for i in range(60):
        for p in params:
            p.grad = None
        torch.cuda.synchronize(); t0 = time.perf_counter()
        loss = m(x, ei, ea).square().mean()
        torch.cuda.synchronize(); t1 = time.perf_counter()
        loss.backward()
        torch.cuda.synchronize(); t2 = time.perf_counter()
        if i >= 10:
            f.append(t1 - t0); b.append(t2 - t1)
    f.sort(); b.sort()
    print(f"{name}: forward {f[25]*1e3:.3f} ms, backward {b[25]*1e3:.3f} ms")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            for p in params:
                p.grad = None
            loss = m(x, ei, ea).square().mean()
            loss.backward()
        torch.cuda.synchronize()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=25,
                                    max_name_column_width=40))
    prof.export_chrome_trace(os.path.join(os.environ.get("OUT", "/tmp"), f"trace-{name}.json"))
