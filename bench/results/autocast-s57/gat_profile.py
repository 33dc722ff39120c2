"""Where a Cora GAT training step (examples/python/train_cora.py's model)
spends its time under autocast(bf16) against float32 (session 57): per
mode the median step (CUDA events, synchronised), then torch.profiler's
kernels by device time and the ops by host time over 20 steps.
    python gat_profile.py DATASETS [gat|gcn]"""
import os, sys, pathlib
os.environ.setdefault("GNNC_JIT", "sync")
import torch
import torch.nn.functional as F
from torch.profiler import profile, ProfilerActivity
root = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(root / "examples" / "python"))
sys.path.insert(0, str(root / "bench"))
import train_cora  # noqa: E402
from nn_layers import median_ms  # noqa: E402  (timing factored in after call 4)
import gnnc.nn as G  # noqa: E402

os.environ["GNNC_DATASETS"] = sys.argv[1]
name = sys.argv[2] if len(sys.argv) > 2 else "gat"
dev = torch.device("cuda")
x, edge_index, y, masks, classes = train_cora.load_planetoid(train_cora.find_dataset("cora"),
                                                              dev)
rows = masks["train"].nonzero().squeeze(1)
for mode in ("f32", "bf16"):
    torch.manual_seed(0)
    cls, lr = train_cora.SETTINGS[name]
    model = cls(G, x.shape[1], classes).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=5e-4)

    def step():
        opt.zero_grad()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=mode == "bf16"):
            out = model(x, edge_index)
            loss = F.cross_entropy(out[rows], y[rows])
        loss.backward()
        opt.step()
    print(f"{name} {mode}: step {median_ms(step, 100, 30):.3f} ms", flush=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(20):
            step()
        torch.cuda.synchronize()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25, max_name_column_width=70))
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=20, max_name_column_width=70))
