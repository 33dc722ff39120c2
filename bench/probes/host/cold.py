"""Where the first training step of a 2-layer gnnc.nn GAT on Cora goes in a
fresh process with an empty kernel cache (issue 28's cold start), after
PyTorch's own first-use costs are paid on tensors of the same shapes:
cProfile of the first forward+backward (sorted by cumulative, then own
time), and the second step's time beside it.
    GNNC_CACHE_DIR=$(mktemp -d) python bench/probes/host/cold.py"""
import cProfile
import os
import pstats
import sys
import time

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "examples", "python"))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import gnnc.nn as gnn  # noqa: E402
from train_cora import GAT, find_dataset, load_planetoid  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "bench"))
from jit_latency import warm_torch  # noqa: E402

dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
torch.manual_seed(0)
x, ei, y, masks, classes = load_planetoid(find_dataset("cora"), dev)
rows = masks["train"].nonzero().squeeze(1)
model = GAT(gnn, x.shape[1], classes).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=0.005)
warm_torch(x, y, rows, classes)
sync()


def step():
    opt.zero_grad()
    F.cross_entropy(model(x, ei)[rows], y[rows]).backward()
    opt.step()
    sync()


prof = cProfile.Profile()
t0 = time.perf_counter()
prof.enable()
step()
prof.disable()
t1 = time.perf_counter()
step()
t2 = time.perf_counter()
print(f"first step {t1 - t0:.3f} s (profiled), second {1e3 * (t2 - t1):.1f} ms")
st = pstats.Stats(prof)
st.sort_stats("cumulative").print_stats(35)
st.sort_stats("tottime").print_stats(25)
