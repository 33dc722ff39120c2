"""Where a reddit-like SAGE epoch goes (issue 30): train_ddp.py's epoch with and
without its mid-step synchronisation, the loader alone, and torch.profiler
tables of 20 training steps and 20 sampled batches (GPU kernels per step,
synchronising calls). Run on a GPU machine from the repository root:
    python bench/probes/loader/reddit_step.py     (G=synthetic:N:E:F:C)"""
import os, sys, time, collections
sys.path.insert(0, "examples/python")
import torch
import train_ddp as T
from torch.profiler import profile, ProfilerActivity
args = T.parse_args(["--graph", os.environ.get("G", "synthetic:232965:114615892:128:41"), "--epochs", "1"])
dev = torch.device("cuda")
run = T.Run(args, 0, 1, dev)
print(run.describe(), flush=True)
el, inl, seeds = run.train_epoch(0)
print(f"epoch0 {el*1e3:.0f} ms loader {inl*1e3:.0f} ms", flush=True)
el, inl, seeds = run.train_epoch(1)
print(f"epoch1 {el*1e3:.0f} ms loader {inl*1e3:.0f} ms", flush=True)
# no mid-step sync: the epoch as a user runs it
import torch.nn.functional as F
def epoch_nosync(e, only_loader=False):
    run.net.train(); run.train_loader.set_epoch(e); torch.cuda.synchronize(); t0 = time.perf_counter(); n = 0
    for batch in run.train_loader:
        n += 1
        if only_loader: continue
        run.opt.zero_grad()
        out = run.net(batch.x, batch.edge_index)[:batch.batch_size]
        F.cross_entropy(out, batch.y[:batch.batch_size]).backward()
        run.opt.step()
    torch.cuda.synchronize(); return (time.perf_counter() - t0) * 1e3, n
for e in range(2, 4):
    print("epoch no mid-step sync %.0f ms (%d steps)" % epoch_nosync(e), flush=True)
    print("loader alone %.0f ms (%d steps)" % epoch_nosync(e, True), flush=True)
SYNC = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpyAsync", "cudaMemcpy")
def prof(label, fn, K=20):
    it = iter(run.train_loader)
    batches = [next(it) for _ in range(K)]
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        for b in batches if label == "train" else range(K):
            fn(b)
        torch.cuda.synchronize()
    cnt = collections.Counter(); kern = 0.0
    for ev in p.events():
        if ev.name in SYNC: cnt[ev.name] += 1
        if ev.device_type == torch.autograd.DeviceType.CUDA: kern += ev.device_time_total
    print(f"== {label}: per step kernels {kern / K:.0f} us; " + ", ".join(f"{k}={v / K:g}" for k, v in cnt.items()), flush=True)
    print(p.key_averages().table(sort_by="self_cpu_time_total", row_limit=22, max_name_column_width=45))
    print(p.key_averages().table(sort_by="self_device_time_total", row_limit=12, max_name_column_width=45))
def train(batch):
    run.opt.zero_grad()
    out = run.net(batch.x, batch.edge_index)[:batch.batch_size]
    F.cross_entropy(out, batch.y[:batch.batch_size]).backward()
    run.opt.step()
seeds = run.train_loader.input_nodes
def sample(_):
    i = torch.randint(0, seeds.numel(), (1024,), device=dev)
    run.train_loader._sample(seeds[i], None)
prof("train", train)
prof("sample", sample)
