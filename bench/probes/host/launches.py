"""Where a host-bound forward+backward step goes (issue 28: pubmed's SAGE and
GIN cases): for each layer, gnnc's and PyG's step on a real graph, per step:
the kernel launches (and cuBLAS calls) of the forward and of the backward,
the host time of the forward call and of ``.backward()``, the same for a
step with no layer (the shared part: ``(x * dy).sum().backward()``), and
the mean host time per CUDA runtime/driver call kind.
    python bench/probes/host/launches.py DATASET_DIR [--calling-thread]
        [--channels C] [layers...]"""
import argparse, collections, os, pathlib, statistics, sys, time
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import nn_layers as B
from torch.profiler import profile, ProfilerActivity

ap = argparse.ArgumentParser()
ap.add_argument("dataset")
ap.add_argument("layers", nargs="*")
ap.add_argument("--calling-thread", action="store_true")
ap.add_argument("--channels", type=int, default=64)
ap.add_argument("--rounds", type=int, default=7)
args = ap.parse_args()
if args.calling_thread:
    torch.autograd.set_multithreading_enabled(False)
dev = "cuda"
ei, n = B.load_graph(pathlib.Path(args.dataset), dev)
c = args.channels
x = torch.randn(n, c, device=dev, requires_grad=True)
dy = torch.randn(n, c, device=dev)


def timed(layer, k=100):
    """Median over rounds of host us per forward call, per backward call,
    and wall us per step (synchronised at the end of each round)."""
    fw, bw, wall = [], [], []
    for _ in range(args.rounds):
        torch.cuda.synchronize()
        tf = tb = 0.0
        t0 = time.perf_counter()
        for _ in range(k):
            a = time.perf_counter()
            out = layer(x, ei) if layer is not None else x * 1.0
            loss = (out * dy).sum()
            b = time.perf_counter()
            loss.backward()
            tf += b - a
            tb += time.perf_counter() - b
        torch.cuda.synchronize()
        wall.append((time.perf_counter() - t0) / k * 1e6)
        fw.append(tf / k * 1e6)
        bw.append(tb / k * 1e6)
    return statistics.median(fw), statistics.median(bw), statistics.median(wall)


def launches(layer):
    """Per step: CUDA launches (runtime+driver), cuBLAS-ish calls, and the
    mean host us of each CUDA API name."""
    steps = 10
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            out = layer(x, ei) if layer is not None else x * 1.0
            (out * dy).sum().backward()
        torch.cuda.synchronize()
    api = collections.defaultdict(lambda: [0, 0.0])
    kernels = 0
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            kernels += 1
        elif e.name.startswith(("cuda", "cu")) and not e.name.startswith("cudaDeviceSynchronize"):
            api[e.name][0] += 1
            api[e.name][1] += e.cpu_time_total
    return kernels / steps, {k: (v[0] / steps, v[1] / max(v[0], 1)) for k, v in api.items()}, prof


names = args.layers or ["sage_mean", "gin", "gcn", "sage_max"]
base = timed(None)
print(f"shared part (x*1 instead of a layer): forward {base[0]:.0f} us, backward {base[1]:.0f} us, wall {base[2]:.0f} us per step")
for name in names:
    ours, pyg = B.pair(name, c, dev)
    for side, layer in (("gnnc", ours), ("pyg", pyg)):
        for _ in range(20):
            (layer(x, ei) * dy).sum().backward()
        torch.cuda.synchronize()
        f, b, w = timed(layer)
        k, api, prof = launches(layer)
        calls = ", ".join(f"{name_} {cnt:g}x{us:.1f}us" for name_, (cnt, us) in sorted(api.items()))
        print(f"{name} {side}: forward host {f:.0f} us, backward host {b:.0f} us, wall {w:.0f} us/step; "
              f"{k:g} kernels/step; API per step: {calls}")
        if side == "gnnc":
            print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=22,
                                            max_name_column_width=60))
