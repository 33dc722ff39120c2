"""Host time of one gnnc.MessagePassing call (issue 33): a GAT-like layer on
a tiny graph, forward only, no_grad, CPU, 200 calls after a warm-up; the
same for gnnc.nn.GATConv (the built-in layer) for comparison.

    PYTHONPATH=build/python python bench/mp_per_call.py
"""

import time

import torch
import torch.nn.functional as F

import gnnc
import gnnc.nn


class GAT(gnnc.MessagePassing):
    def __init__(self, cin, channels, heads):
        super().__init__(aggr="sum")
        self.heads, self.channels = heads, channels
        self.lin = torch.nn.Linear(cin, heads * channels, bias=False)
        self.att_src = torch.nn.Parameter(torch.randn(1, heads, channels))
        self.att_dst = torch.nn.Parameter(torch.randn(1, heads, channels))

    def forward(self, x, edge_index):
        h = self.lin(x).view(-1, self.heads, self.channels)
        return self.propagate(edge_index, x=h)

    def message(self, x_i, x_j, index):
        alpha = (x_j * self.att_src).sum(-1) + (x_i * self.att_dst).sum(-1)
        alpha = F.leaky_relu(alpha, 0.2)
        alpha = gnnc.softmax(alpha, index)
        return alpha.unsqueeze(-1) * x_j

    def update(self, aggr_out):
        return aggr_out.view(-1, self.heads * self.channels)


def per_call(layer, x, ei, calls=200):
    with torch.no_grad():
        for _ in range(10):
            layer(x, ei)
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(calls):
                layer(x, ei)
            best = min(best, (time.perf_counter() - t0) / calls)
    return best


def main():
    torch.manual_seed(0)
    ei = torch.tensor([[0, 0, 2, 3, 2, 4, 1, 6, 3], [1, 1, 2, 1, 0, 3, 4, 3, 6]])
    x = torch.randn(7, 16)
    mp = GAT(16, 8, 4).eval()
    nn = gnnc.nn.GATConv(16, 8, heads=4, add_self_loops=False, bias=False).eval()
    print(f"gnnc.MessagePassing GAT: {per_call(mp, x, ei) * 1e6:8.1f} us/call")
    print(f"gnnc.nn.GATConv:         {per_call(nn, x, ei) * 1e6:8.1f} us/call")


if __name__ == "__main__":
    main()
