"""Cold start of a 2-layer gnnc.nn GAT training step on Cora (issue 28): a
cProfile of step 1 in a fresh process with an empty kernel cache.
    GNNC_CACHE_DIR=$(mktemp -d) python bench/probes/host/cold.py"""
import cProfile, io, os, pstats, sys, time
t0 = time.perf_counter()
import torch
import torch.nn.functional as F
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "python"))
import gnnc.nn as gnn
from train_cora import GAT, find_dataset, load_planetoid
dev = torch.device("cuda")
torch.zeros(1, device=dev); torch.cuda.synchronize()
t1 = time.perf_counter()
x, ei, y, masks, classes = load_planetoid(find_dataset("cora"), dev)
model = GAT(gnn, x.shape[1], classes).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=0.005)
rows = masks["train"].nonzero().squeeze(1)
torch.cuda.synchronize()
pr = cProfile.Profile()
t2 = time.perf_counter()
pr.enable()
out = model(x, ei)
torch.cuda.synchronize(); t3 = time.perf_counter()
F.cross_entropy(out[rows], y[rows]).backward()
torch.cuda.synchronize(); t4 = time.perf_counter()
opt.step()
torch.cuda.synchronize(); t5 = time.perf_counter()
pr.disable()
print(f"imports+cuda init {t1-t0:.2f}s; forward {t3-t2:.2f}s backward {t4-t3:.2f}s adam {t5-t4:.2f}s")
s = io.StringIO()
pstats.Stats(pr, stream=s).sort_stats("cumtime").print_stats(30)
print("\n".join(l[:150] for l in s.getvalue().splitlines()[:45]))
