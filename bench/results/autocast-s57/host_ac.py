"""Where a layer step's time goes under torch.autocast(bf16) against float32
(session 57): pubmed, 128 channels, gnnc only; per step (nn_layers.py's:
forward, `.mul(dy).sum()`, backward, all under autocast) the CUDA-event
time, the host time of the forward and of the backward (medians of 60
steps after 20), and the count of aten._to_copy and allocations per step.
    python host_ac.py DATASETS [layers...]"""
import os, sys, time, statistics, pathlib
os.environ.setdefault("GNNC_JIT", "sync")
import torch
from torch.utils._python_dispatch import TorchDispatchMode
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from nn_layers import pair, load_graph  # noqa: E402


class Count(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.casts = self.empty = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.aten._to_copy.default:
            self.casts += 1
        if "empty" in func.__name__:
            self.empty += 1
        return func(*args, **(kwargs or {}))


dev = torch.device("cuda")
ei, n = load_graph(pathlib.Path(sys.argv[1]) / "pubmed", dev)
c = 128
gen = torch.Generator(device=dev).manual_seed(1)
x = torch.randn(n, c, device=dev, generator=gen)
dy = torch.randn(n, c, device=dev, generator=gen)
for name in sys.argv[2:] or ["sage_max", "gcn", "gat"]:
    ours, _ = pair(name, c, dev)
    xx = x.clone().requires_grad_()
    for mode in ("f32", "bf16"):
        ctx = (lambda: torch.autocast("cuda", dtype=torch.bfloat16,
                                      enabled=mode == "bf16"))

        def step():
            with ctx():
                out = ours(xx, ei)
                loss = out.mul(dy[:, :out.size(1)]).sum()
            loss.backward()
        for _ in range(20):
            step()
        torch.cuda.synchronize()
        fw, bw, ev = [], [], []
        for _ in range(60):
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            t0 = time.perf_counter()
            with ctx():
                out = ours(xx, ei)
                loss = out.mul(dy[:, :out.size(1)]).sum()
            t1 = time.perf_counter()
            loss.backward()
            t2 = time.perf_counter()
            b.record()
            b.synchronize()
            fw.append((t1 - t0) * 1e6)
            bw.append((t2 - t1) * 1e6)
            ev.append(a.elapsed_time(b))
        with Count() as k:
            step()
        print(f"{name} {mode}: step {statistics.median(ev):.3f} ms, host forward "
              f"{statistics.median(fw):.0f} us, backward {statistics.median(bw):.0f} us, "
              f"to_copy {k.casts}, empty {k.empty}, plan "
              f"{'_gnnc_plan' in ours.__dict__}", flush=True)
