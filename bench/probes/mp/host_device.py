# Host vs device time per forward+backward step (session 13): user-written
# layers against PyG, subclasses against built-ins. Run from the repository root:
#   GNNC_JIT=sync python3 bench/probes/mp/host_device.py DATASETS musae-github LEConv,gat
# (DATASETS holds the data-set folders; its sibling `peers` the scoreboard's graphs.py
# for synthetic graphs.)
import sys, time, pathlib
import torch
import _layers
from nn_layers import median_ms
from torch.profiler import profile, ProfilerActivity
dev = torch.device("cuda")
D = pathlib.Path(sys.argv[1])
def kernels(step, K=10):
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(K): step()
        torch.cuda.synchronize()
    tot = 0.0
    for e in p.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            tot += getattr(e, "device_time_total", 0) or e.cuda_time_total
    return tot / K
def measure(step):
    for _ in range(10): step()
    torch.cuda.synchronize()
    hs, ls = [], []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(30): step()
        h = time.perf_counter() - t
        torch.cuda.synchronize()
        l = time.perf_counter() - t
        hs.append(h / 30 * 1e6); ls.append(l / 30 * 1e6)
    ev = median_ms(step, 20, 3) * 1e3
    return min(hs), min(ls), ev, kernels(step)
c = 64
print("columns: host-us/step (enqueue, 30 back to back), loop-us/step, event-median-us (idle GPU), kernel-us/step")
for name, call, sides, x in _layers.cases(D, sys.argv[2], sys.argv[3], c, dev):
    res = {}
    for rnd in range(2):
        for side, layer in sides:
            xx = x.clone().requires_grad_()
            r = measure(_layers.step(layer, call, xx))
            res[side] = tuple(min(p, q) for p, q in zip(res.get(side, r), r))
    (s1, r1), (s2, r2) = res.items()
    print(f"{name:18s} " + " | ".join(f"{s} h {r[0]:6.0f} loop {r[1]:6.0f} ev {r[2]:6.0f} k {r[3]:6.0f}" for s, r in res.items())
          + f" | ratio loop {r2[1] / r1[1]:.2f} ev {r2[2] / r1[2]:.2f}", flush=True)
