#!/usr/bin/env python3
"""Where a Cora training step goes: gnnc eager, gnnc under
torch.compile(mode="reduce-overhead") and (with a second argument) PyG
eager; forward, backward and Adam timed apart (synchronised), the
pipelined step, and torch.profiler tables of the gnnc runs.

    python bench/profile_reduce_overhead.py gcn|gat [pyg]

Run from the repository root on a CUDA machine (GNNC_JIT=sync)."""
import sys, time, statistics
sys.path.insert(0, "examples/python")
import torch, torch.nn.functional as F
import train_cora as tc
import gnnc.nn, torch_geometric.nn
dev = torch.device("cuda")
x, ei, y, masks, classes = tc.load_planetoid(tc.find_dataset("cora"), dev)
rows = masks["train"].nonzero().squeeze(1)
which = sys.argv[1]
def run(nn, mode, label, steps=300):
    torch.manual_seed(0)
    cls, lr = tc.SETTINGS[which]
    model = cls(nn, x.shape[1], classes).to(dev)
    m = torch.compile(model, fullgraph=True, mode="reduce-overhead") if mode != "eager" else model
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=5e-4, foreach=True)
    stepfn = opt.step
    parts = {"fwd": [], "bwd": [], "opt": [], "all": []}
    def step(t):
        torch.cuda.synchronize(); t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        out = m(x, ei); loss = F.cross_entropy(out[rows], y[rows])
        torch.cuda.synchronize(); t1 = time.perf_counter()
        loss.backward()
        torch.cuda.synchronize(); t2 = time.perf_counter()
        stepfn()
        torch.cuda.synchronize(); t3 = time.perf_counter()
        if t:
            for k, v in zip(("fwd", "bwd", "opt", "all"), (t1 - t0, t2 - t1, t3 - t2, t3 - t0)):
                parts[k].append(v * 1e3)
    for i in range(steps):
        step(i >= 20)
    # no-sync epoch time
    torch.cuda.synchronize(); t0 = time.perf_counter()
    for i in range(100):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(m(x, ei)[rows], y[rows]); loss.backward(); stepfn()
    torch.cuda.synchronize(); nosync = (time.perf_counter() - t0) * 10
    print(f"{label:22s} " + " ".join(f"{k} {statistics.median(v):.3f}" for k, v in parts.items()) + f"  pipelined {nosync:.3f} ms/step", flush=True)
    if mode in ("ro", "eager"):
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for i in range(20):
                opt.zero_grad(set_to_none=True)
                loss = F.cross_entropy(m(x, ei)[rows], y[rows]); loss.backward(); stepfn()
            torch.cuda.synchronize()
        print(prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=18, max_name_column_width=60))
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25, max_name_column_width=60))
if len(sys.argv) > 2: run(torch_geometric.nn, "eager", "pyg eager")
run(gnnc.nn, "eager", "gnnc eager")
run(gnnc.nn, "ro", "gnnc reduce-overhead")

