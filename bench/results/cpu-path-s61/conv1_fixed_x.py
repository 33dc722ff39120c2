"""GCNConv(1433, 16) on Cora's features on the CPU, the same x every call
(so it stays in the caches): forward under no_grad and forward+backward,
the lower quartile of 40 calls after 5 (N calls for forward+backward).
    PYTHONPATH=build/python python bench/results/cpu-path-s61/conv1_fixed_x.py [N]"""
import pathlib
import sys, time, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "examples" / "python"))
import train_cora as T
import gnnc.nn
x, ei, y, masks, classes = T.load_planetoid(T.find_dataset("cora"), "cpu")
torch.manual_seed(0)
conv = gnnc.nn.GCNConv(x.shape[1], 16)
g = torch.randn(x.shape[0], 16)
def f(): conv(x, ei)
def fb(): conv(x, ei).backward(g)
def tm(fn, k=40):
    for _ in range(5): fn()
    ts = []
    for _ in range(k):
        t = time.perf_counter(); fn(); ts.append((time.perf_counter() - t) * 1e3)
    ts.sort(); return ts[len(ts)//4]
with torch.no_grad(): a = tm(f)
b = tm(fb, int(sys.argv[1]) if len(sys.argv) > 1 else 40)
print(f"fwd {a:.2f} fwd+bwd {b:.2f}")
