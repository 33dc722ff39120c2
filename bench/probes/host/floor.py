"""PyTorch's own host floor beside a gnnc layer (issue 28): host us per call
of nn.Linear forward (no_grad) and forward+backward (.sum().backward()) on
the 1,000-node probe graph's features, and the CUDA API calls inside one
gnnc op call (torch.profiler with CUDA activities, the op called directly).
    python bench/probes/host/floor.py [layer]"""
import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from _cached import graph, op_calls, per_call  # noqa: E402
import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402
import nn_layers as B  # noqa: E402

n, c, ei, x = graph("cuda")
lin = torch.nn.Linear(c, c).cuda()
xg = x.clone().requires_grad_()
with torch.no_grad():
    print("Linear fwd", round(per_call(lambda: lin(x), 2000), 1))
print("Linear fwd+bwd", round(per_call(lambda: lin(xg).sum().backward(), 1000), 1))
print("empty_like", round(per_call(lambda: torch.empty_like(x), 2000), 1))
print("x.sum()", round(per_call(lambda: x.sum(), 2000), 1))
name = sys.argv[1] if len(sys.argv) > 1 else "gcn"
ours, _ = B.pair(name, c, "cuda")
with torch.no_grad():
    calls = op_calls(lambda: ours(x, ei))
fn, edge_index, nn_, tensors, handle = calls[0]
args = (fn._target, edge_index, nn_, -1, handle, list(tensors))
print(f"{name} op direct", round(per_call(lambda: torch.ops.gnnc.call(*args), 2000), 1))
acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
for label, f in (("op direct", lambda: torch.ops.gnnc.call(*args)),
                 ("layer fwd+bwd", lambda: ours(xg, ei).sum().backward())):
    for _ in range(50):
        f()
    torch.cuda.synchronize()
    with profile(activities=acts) as prof:
        for _ in range(200):
            f()
        torch.cuda.synchronize()
    print(f"== {name} {label}, 200 calls\n" +
          prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=40), flush=True)
