"""Forward+backward of GINEConv (a 2-layer MLP, 4-channel edge features) on
a random graph of 20,000 nodes and 200,000 edges at 64 channels, CPU
tensors: the median of REPS steps after 3 warm-ups, then the process's peak
and current resident memory.
    python gine_step.py [gnnc|pyg] [REPS]"""
import sys, time, statistics, torch, gnnc.nn
import torch_geometric.nn as pnn
torch.manual_seed(0)
n, E, c = 20000, 200000, 64
ei = torch.randint(0, n, (2, E)); x = torch.randn(n, c, requires_grad=True); ea = torch.randn(E, 4)
def mlp(): return torch.nn.Sequential(torch.nn.Linear(c, c), torch.nn.ReLU(), torch.nn.Linear(c, c))
lib = sys.argv[1] if len(sys.argv) > 1 else "gnnc"
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
nn = gnnc.nn if lib == "gnnc" else pnn
layer = nn.GINEConv(mlp(), train_eps=True, edge_dim=4)
ts = []
for i in range(3 + reps):
    t = time.perf_counter(); layer(x, ei, ea).sum().backward()
    if i >= 3: ts.append((time.perf_counter() - t) * 1e3)
print(lib, "GINE fwd+bwd ms median", round(statistics.median(ts), 1), [round(v) for v in ts])
import resource  # noqa: E402
print("maxrss MB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, "now MB",
      int(open("/proc/self/statm").read().split()[1]) * 4096 >> 20)
