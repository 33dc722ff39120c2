"""One library's 2-layer GCN (or GAT) of train_cora.py on Cora on the CPU,
trained as train_cora.py does (dropout, Adam, an evaluation forward after
each step): median training-step time of 190 steps after 10, in a process
of its own (the other library's allocations then do not change this one's
page faults).
    PYTHONPATH=build/python python bench/results/cpu-path-s61/epoch.py gnnc|pyg [gat]"""
import pathlib, statistics, sys, time
import torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "examples" / "python"))
import train_cora as T  # noqa: E402
import gnnc.nn  # noqa: E402
import torch_geometric.nn as pnn  # noqa: E402

lib = sys.argv[1]
gat = len(sys.argv) > 2 and sys.argv[2] == "gat"
x, ei, y, masks, classes = T.load_planetoid(T.find_dataset("cora"), torch.device("cpu"))
rows = masks["train"].nonzero().squeeze(1)
torch.manual_seed(0)
model = (T.GAT if gat else T.GCN)(gnnc.nn if lib == "gnnc" else pnn, x.shape[1], classes)
opt = torch.optim.Adam(model.parameters(), lr=0.005 if gat else 0.01, weight_decay=5e-4)
ts = []
for it in range(200):
    t = time.perf_counter()
    model.train()
    opt.zero_grad()
    F.cross_entropy(model(x, ei)[rows], y[rows]).backward()
    opt.step()
    ts.append((time.perf_counter() - t) * 1e3)
    model.eval()
    with torch.no_grad():
        model(x, ei).argmax(1)
print(lib, "GAT" if gat else "GCN", "step %.2f ms" % statistics.median(ts[10:]))
