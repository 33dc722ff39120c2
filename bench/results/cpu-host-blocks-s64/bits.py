"""Forward and backward of seven gnnc.nn layers (GCN, SAGE, GAT, GATv2, GIN,
GINE, Transformer) in float32, bfloat16 and float64 on one random CPU graph,
outputs and gradients saved to FILE: run with two builds of the module and
compare the files bit for bit.    python bits.py FILE"""
import sys, torch, gnnc.nn
torch.manual_seed(0)
n, E, c = 3000, 30000, 32
ei = torch.randint(0, n, (2, E)); ea = torch.randn(E, 4)
def mlp(): return torch.nn.Sequential(torch.nn.Linear(c, c), torch.nn.ReLU(), torch.nn.Linear(c, c))
out = {}
for dt in (torch.float32, torch.bfloat16, torch.float64):
    for name, make in {"gcn": lambda: gnnc.nn.GCNConv(c, c), "sage": lambda: gnnc.nn.SAGEConv(c, c),
                       "gat": lambda: gnnc.nn.GATConv(c, c // 4, heads=4), "gatv2": lambda: gnnc.nn.GATv2Conv(c, 8, heads=4),
                       "gin": lambda: gnnc.nn.GINConv(mlp(), train_eps=True),
                       "gine": lambda: gnnc.nn.GINEConv(mlp(), train_eps=True, edge_dim=4),
                       "tr": lambda: gnnc.nn.TransformerConv(c, 8, heads=4)}.items():
        torch.manual_seed(1)
        layer = make().to(dt)
        x = torch.randn(n, c, dtype=dt, requires_grad=True)
        extra = (ea.to(dt),) if name == "gine" else ()
        y = layer(x, ei, *extra)
        (y * y).sum().backward()
        out[f"{name}-{dt}"] = [y.detach(), x.grad] + [p.grad for p in layer.parameters() if p.grad is not None]
torch.save(out, sys.argv[1])
