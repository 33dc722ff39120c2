"""Issue 30, session 23: the reddit-like sampled epoch with the batch's gnnc
graph built by the loader on its own stream (no synchronisation left in the
training step) against the build in the first layer call, with the loader's
stream at high priority or not, trimmed or not; interleaved rounds in one
process (one Run). Then torch.profiler per step of loader + training (GPU
kernel time on both streams, synchronising calls). Run on a GPU machine
from the repository root: python bench/probes/loader/prebuild.py
Needs bench/results/loader-ahead-h200-s23/build-ahead.patch applied (the
loader's builds ahead were measured and not merged; see that folder)."""
import os, sys, time, collections, statistics
sys.path.insert(0, "examples/python")
import torch
import torch.nn.functional as F
import train_ddp as T
import gnnc.loader as L
from torch.profiler import profile, ProfilerActivity

G = os.environ.get("G", "synthetic:232965:114615892:128:41")
ROUNDS = int(os.environ.get("ROUNDS", "3"))
args = T.parse_args(["--graph", G, "--epochs", "1"])
dev = torch.device("cuda")
run = T.Run(args, 0, 1, dev)
print(run.describe(), torch.cuda.get_device_name(), flush=True)
VARIANTS = {  # name: (graphs built ahead by the loader, its stream's priority, trim)
    "off": (False, 0, False),
    "ahead": (True, 0, False),
    "ahead+prio": (True, -1, False),
    "off+trim": (False, 0, True),
    "ahead+trim+prio": (True, -1, True),
}
ORIGINAL = L.NeighborLoader._build_ahead
def setv(name):
    ahead, prio, trim = VARIANTS[name]
    args.trim = trim
    ld = run.train_loader
    ld._forms, ld._last_ahead = [], None
    L.NeighborLoader._build_ahead = ORIGINAL if ahead else (lambda self, *a: [])
    ld._stream = torch.cuda.Stream(dev, priority=prio)
times = collections.defaultdict(list)
for name in VARIANTS if ROUNDS else ():  # warm-up: kernels of every variant compiled
    setv(name); run.train_epoch(0)
for r in range(ROUNDS):
    for name in VARIANTS:
        setv(name)
        el, inl, seeds, loss, steps = run.train_epoch(r + 1)
        times[name].append((el * 1e3, inl * 1e3))
        print(f"round {r} {name:20s} epoch {el*1e3:7.1f} ms loader {inl*1e3:6.1f} ms "
              f"steps {steps} loss {loss/steps:.4f}", flush=True)
if ROUNDS:
    print("== medians")
for name, v in times.items():
    print(f"{name:20s} epoch {statistics.median(a for a, _ in v):7.1f} ms "
          f"(min {min(a for a, _ in v):7.1f})  loader {statistics.median(b for _, b in v):6.1f} ms")
SYNC = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
        "cudaMemcpyAsync", "cudaMemcpy")
def prof(name, K=20):
    setv(name)
    run.net.train()
    it = iter(run.train_loader)
    for _ in range(3):
        next(it)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        for _ in range(K):
            batch = next(it)
            run.opt.zero_grad()
            out = run.net(batch.x, batch.edge_index, *T.hop_counts(batch, args))[:batch.batch_size]
            F.cross_entropy(out, batch.y[:batch.batch_size]).backward()
            run.opt.step()
        torch.cuda.synchronize()
    cnt = collections.Counter(); kern = 0.0
    for ev in p.events():
        if ev.name in SYNC: cnt[ev.name] += 1
        if ev.device_type == torch.autograd.DeviceType.CUDA: kern += ev.device_time_total
    print(f"== profile {name}: per step GPU kernels {kern / K:.0f} us; " +
          ", ".join(f"{k}={v / K:g}" for k, v in cnt.items()), flush=True)
    print(p.key_averages().table(sort_by="self_device_time_total", row_limit=18,
                                 max_name_column_width=50), flush=True)
for name in ("off", "ahead+prio") if ROUNDS else ():
    prof(name)
