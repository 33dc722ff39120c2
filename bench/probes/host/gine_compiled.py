"""Where the host time of a GINE training step goes, eager and under
torch.compile (bench/gine.py's model and batch, gnnc.nn's layers): the
step's median wall time, then torch.profiler's CPU-side table of 5 steps
(sorted by self CPU time) for each mode.
    python bench/probes/host/gine_compiled.py QM9_DIR"""
import os, pathlib, sys, time
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gine as G  # noqa: E402
from torch.profiler import profile, ProfilerActivity  # noqa: E402

dev = torch.device(sys.argv[2] if len(sys.argv) > 2 else "cuda")
_, ours, x, ei, ea = G.probe_setup(pathlib.Path(sys.argv[1]), dev)
params = list(ours.parameters())
for mode, m in (("eager", ours), ("compiled", torch.compile(ours, fullgraph=True))):
    def step():
        for p in params:
            p.grad = None
        m(x, ei, ea).square().mean().backward()
    for _ in range(30):
        step()
    times = []
    for _ in range(100):
        torch.cuda.synchronize() if dev.type == "cuda" else None
        t = time.perf_counter()
        step()
        torch.cuda.synchronize() if dev.type == "cuda" else None
        times.append(time.perf_counter() - t)
    times.sort()
    print(f"{mode}: step {times[50] * 1e3:.3f} ms (median)")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(5):
            step()
        torch.cuda.synchronize() if dev.type == "cuda" else None
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=30,
                                    max_name_column_width=60))
