"""GINEConv steps (as gine_step.py) on a new random graph each step of
180,000 to 200,000 edges (sizes changing step to step, as over sampled
subgraphs): the median of 10 steps after 3, then peak and current resident
memory.    python gine_varying.py"""
import sys, time, statistics, torch, gnnc.nn, resource
torch.manual_seed(0)
n, c = 20000, 64
def mlp(): return torch.nn.Sequential(torch.nn.Linear(c, c), torch.nn.ReLU(), torch.nn.Linear(c, c))
layer = gnnc.nn.GINEConv(mlp(), train_eps=True, edge_dim=4)
x = torch.randn(n, c, requires_grad=True)
ts = []
for i in range(13):
    E = int(torch.randint(180000, 200001, ()).item())
    ei = torch.randint(0, n, (2, E)); ea = torch.randn(E, 4)
    t = time.perf_counter(); layer(x, ei, ea).sum().backward()
    if i >= 3: ts.append((time.perf_counter() - t) * 1e3)
print("varying E: median ms", round(statistics.median(ts), 1), "maxrss MB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
      "now MB", int(open("/proc/self/statm").read().split()[1]) * 4096 >> 20)
