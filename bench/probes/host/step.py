"""Host time of one forward+backward step of a gnnc.nn layer against PyG's on
a real graph (issue 28: pubmed steps are host-bound), with torch.profiler's
CPU-side breakdown and the synchronising CUDA calls.
    python bench/probes/host/step.py DATASET_DIR [layers...]"""
import os, pathlib, sys, time
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import nn_layers as B
from torch.profiler import profile, ProfilerActivity

dev = "cuda"
folder = pathlib.Path(sys.argv[1])
ei, n = B.load_graph(folder, dev)
c = 64
x = torch.randn(n, c, device=dev, requires_grad=True)
for name in sys.argv[2:] or ["gin", "gcn", "sage_mean"]:
    ours, pyg = B.pair(name, c, dev)
    dy = torch.randn(n, c, device=dev)
    for side, layer in (("gnnc", ours), ("pyg", pyg)):
        def step():
            out = layer(x, ei)
            (out * dy).sum().backward()
        for _ in range(20):
            step()
        torch.cuda.synchronize()
        k = 100
        t = time.perf_counter()
        for _ in range(k):
            step()
        h = (time.perf_counter() - t) / k * 1e6
        torch.cuda.synchronize()
        w = (time.perf_counter() - t) / k * 1e6
        t = time.perf_counter()
        for _ in range(k):
            out = layer(x, ei)
        fh = (time.perf_counter() - t) / k * 1e6
        torch.cuda.synchronize()
        print(f"{name} {side}: step host {h:.0f} us, wall {w:.0f} us; forward host {fh:.0f} us")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(10):
                step()
            torch.cuda.synchronize()
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=14,
                                        max_name_column_width=48))
