#!/bin/bash
# Session 37, call 1: GIN/GINE fold A/B (bench/probes/fold/gin_fold.py) and
# the CUDA branch of the 0-d parameter test left unrun in session 36.
source bench/gpu_setup.sh .carry "$OUT"
cd bench
t fold
python3 probes/fold/gin_fold.py --datasets $D --qm9 $D/qm9 > $R/fold.txt 2>$R/fold.err
t profile
python3 - > $R/profile.txt 2>>$R/fold.err <<'PY'
import os, pathlib, torch, nn_layers, gnnc.nn
from gnnc.nn import conv
import torch_geometric.nn as P
dev = torch.device("cuda")
ei, n = nn_layers.load_graph(pathlib.Path(os.environ["GNNC_DATASETS"]) / "pubmed", dev)
c = 64
x = torch.randn(n, c, device=dev).requires_grad_(); dy = torch.randn(n, c, device=dev)
lin = lambda: torch.nn.Sequential(torch.nn.Linear(c, c), torch.nn.ReLU(), torch.nn.Linear(c, c))
torch.manual_seed(0)
p = P.GINConv(lin(), train_eps=True).to(dev); o = gnnc.nn.GINConv(lin(), train_eps=True).to(dev)
F = conv._leading_mlp
for name, m, fold in (("pyg", p, F), ("gnnc", o, F), ("gnnc_nofold", o, lambda a, b: (None, None, None))):
    conv._leading_mlp = fold
    for _ in range(20): m(x, ei).mul(dy).sum().backward()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(20): m(x, ei).mul(dy).sum().backward()
        torch.cuda.synchronize()
    print("=====", name)
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=25))
PY
t pytest
cd ../python/tests
GNNC_TEST_DEVICE=cuda timeout 200 python3 -m pytest -q -x -p no:cacheprovider -k "scalar_parameter" . > $R/pytest.txt 2>&1
t done
