"""One gnnc.nn layer (gine, gcn, gin, sage or gat) on a random graph of 20,000
nodes and 200,000 edges at 64 channels on the CPU: forward and backward ms of
each of N calls.
    PYTHONPATH=build/python python bench/results/cpu-path-s61/one_layer.py gine 5"""
import torch, time, gnnc.nn
torch.manual_seed(0)
n,c,E=20000,64,200000
ei=torch.randint(0,n,(2,E)); x=torch.randn(n,c,requires_grad=True); ea=torch.randn(E,4)
def mlp(): return torch.nn.Sequential(torch.nn.Linear(c,c),torch.nn.ReLU(),torch.nn.Linear(c,c))
import sys
name=sys.argv[1]
mk={"gine":lambda: gnnc.nn.GINEConv(mlp(),train_eps=True,edge_dim=4),
    "gcn":lambda: gnnc.nn.GCNConv(c,c),"gin":lambda: gnnc.nn.GINConv(mlp(),train_eps=True),
    "sage":lambda: gnnc.nn.SAGEConv(c,c),"gat":lambda: gnnc.nn.GATConv(c,c//4,heads=4)}[name]
l=mk()
for i in range(int(sys.argv[2])):
    t=time.perf_counter()
    out = l(x,ei,ea) if name=="gine" else l(x,ei)
    t1=time.perf_counter()
    out.sum().backward()
    t2=time.perf_counter()
    print(f"fwd {1e3*(t1-t):.1f} bwd {1e3*(t2-t1):.1f}")
