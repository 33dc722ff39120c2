"""Why gnnc's GATConv takes longer than its GATv2Conv on the larger graphs
(bench/results/user-s41 call 1: ego-twitter at 128 channels, forward+
backward 6.3 against 3.5 ms; GAT's scores are per-node dot products, so it
should be the cheaper of the two): the device time of each kernel of one
layer step, `layer(x, edge_index).mul(dy).sum().backward()`, from
torch.profiler (10 steps after warm-up), per layer.
    python bench/probes/attention/gat_vs_gatv2.py DATASETS GRAPH [C]"""
import os
import pathlib
import sys

os.environ.setdefault("GNNC_JIT", "sync")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # bench/
import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402
from nn_layers import load_graph  # noqa: E402
import gnnc.nn  # noqa: E402

root, graph = sys.argv[1], sys.argv[2]
c = int(sys.argv[3]) if len(sys.argv) > 3 else 128
ei, n = load_graph(pathlib.Path(root) / graph, "cuda")
torch.manual_seed(0)
x = torch.randn(n, c, device="cuda", requires_grad=True)
dy = torch.randn(n, c, device="cuda")
for name, layer in (("gat", gnnc.nn.GATConv(c, c // 4, heads=4)),
                    ("gatv2", gnnc.nn.GATv2Conv(c, c // 4, heads=4))):
    layer = layer.cuda()

    def step():
        layer(x, ei).mul(dy).sum().backward()
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(10):
            step()
        torch.cuda.synchronize()
    print(f"== {graph} {name} C={c}, 10 steps", flush=True)
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25), flush=True)
