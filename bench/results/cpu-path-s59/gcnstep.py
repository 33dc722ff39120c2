"""A 2-layer GCN (or GAT) of train_cora.py on Cora on the CPU, in eval mode
(no dropout), forward + backward of the cross-entropy: median and minimum
step of N steps after two.
    PYTHONPATH=build/python python bench/results/cpu-path-s59/gcnstep.py [N] [gat]"""
import pathlib, sys, time, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "examples" / "python"))
import train_cora as T
import gnnc.nn as gnn
data = T.load_planetoid(T.find_dataset("cora"), torch.device("cpu"))
x, ei, y = data[0], data[1], data[2]; tm = data[3]["train"]
torch.manual_seed(0)
model = (T.GAT if len(sys.argv)>2 and sys.argv[2]=="gat" else T.GCN)(gnn, x.size(1), 7); model.eval()
def step():
    out = model(x, ei); loss = torch.nn.functional.cross_entropy(out[tm], y[tm]); loss.backward()
for _ in range(2): step()
n=int(sys.argv[1]) if len(sys.argv)>1 else 10
ts=[]
for _ in range(n):
    t=time.perf_counter(); step(); ts.append((time.perf_counter()-t)*1e3)
ts.sort()
print("step ms median %.1f min %.1f" % (ts[len(ts)//2], ts[0]))
