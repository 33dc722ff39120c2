# Where a forward+backward step's host time goes (session 15), per layer:
# kernel launches and aten ops per step (torch.profiler), the CPU time of
# the busiest ops, and a cProfile of the Python. Run from the repository root:
#   GNNC_JIT=sync python3 bench/probes/mp/host_profile.py DATASETS musae-github LEConv,gin
import cProfile, io, pstats, sys, time, pathlib, collections
import torch
import _layers
from torch.profiler import profile, ProfilerActivity
dev = torch.device("cuda")
D = pathlib.Path(sys.argv[1])




def host_us(step, k=30):
    for _ in range(10): step()
    torch.cuda.synchronize()
    best = 1e9
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(k): step()
        best = min(best, (time.perf_counter() - t) / k * 1e6)
        torch.cuda.synchronize()
    return best


def ops(step, K=10):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        for _ in range(K): step()
        torch.cuda.synchronize()
    launches, kernels = 0, 0
    top = collections.Counter(); cnt = collections.Counter()
    for e in p.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            kernels += 1
            continue
        if e.name in ("cudaLaunchKernel", "cuLaunchKernel", "cuLaunchKernelEx",
                      "cudaLaunchKernelExC"):
            launches += 1
        if e.cpu_parent is None:  # top-level CPU events
            top[e.name] += e.cpu_time_total
            cnt[e.name] += 1
    lines = [f"  launches/step {launches / K:.1f} kernels/step {kernels / K:.1f}"]
    for name, us in top.most_common(14):
        lines.append(f"  {us / K:8.1f} us/step {cnt[name] / K:5.1f}x  {name}")
    return "\n".join(lines)


def pyprof(step, K=30):
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(K): step()
    pr.disable()
    torch.cuda.synchronize()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(16)
    return "\n".join(s.getvalue().splitlines()[6:26])


c = 64
for name, call, sides, x in _layers.cases(D, sys.argv[2], sys.argv[3], c, dev):
    for side, layer in sides:
        step = _layers.step(layer, call, x.clone().requires_grad_())
        h = host_us(step)
        print(f"-- {name} {side}: host {h:.0f} us/step", flush=True)
        print(ops(step), flush=True)
        print(pyprof(step), flush=True)
