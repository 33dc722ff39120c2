"""Where a SAGEConv(max) training step's time goes under torch.autocast(bf16)
against float32 (session 56, call 5): pubmed, 128 channels, gnnc and PyG;
per step the CUDA-event time, the host time of the forward and of the
backward, and torch.profiler's ops by self CPU time."""
import os, sys, time, statistics
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from nn_layers import pair, load_graph
import pathlib
from torch.profiler import profile, ProfilerActivity

dev = torch.device("cuda")
ei, n = load_graph(pathlib.Path(sys.argv[1]) / "pubmed", dev)
c = 128
x = torch.randn(n, c, device=dev)
dy = torch.randn(n, c, device=dev)
ours, pyg = pair("sage_max", c, dev)
for side, layer in (("gnnc", ours), ("pyg", pyg)):
    for mode in ("f32", "bf16"):
        xx = x.clone().requires_grad_()
        ctx = (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if mode == "bf16" \
            else (lambda: torch.autocast("cuda", enabled=False))
        def step():
            with ctx():
                out = layer(xx, ei)
                loss = out.float().mul(dy).sum()
            loss.backward()
        for _ in range(20):
            step()
        torch.cuda.synchronize()
        fw, bw, ev = [], [], []
        for _ in range(50):
            a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
            a.record()
            t0 = time.perf_counter()
            with ctx():
                out = layer(xx, ei)
                loss = out.float().mul(dy).sum()
            t1 = time.perf_counter()
            loss.backward()
            t2 = time.perf_counter()
            b.record(); b.synchronize()
            fw.append((t1 - t0) * 1e6); bw.append((t2 - t1) * 1e6); ev.append(a.elapsed_time(b))
        print(f"{side} {mode}: step {statistics.median(ev):.3f} ms, host forward "
              f"{statistics.median(fw):.0f} us, backward {statistics.median(bw):.0f} us", flush=True)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(10):
                step()
            torch.cuda.synchronize()
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=18), flush=True)
