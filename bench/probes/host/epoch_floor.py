"""The floor under issue 28's Cora epochs: the median epoch (zero_grad,
forward, cross-entropy on the training rows, backward, Adam with weight
decay; synchronised) of examples/python/train_cora.py's GCN and GAT with
gnnc.nn and with PyG, beside the same loop on a model with no graph at all
(dropout, Linear(F, 16), ReLU, dropout, Linear(16, C): GCN's parameters
without the propagation). Whatever an epoch costs beyond that MLP's is what
a GNN library can still win; issue 28 asks gnnc's epoch for half of PyG's.
With and without the backward on the calling thread.
    python bench/probes/host/epoch_floor.py"""
import os
import pathlib
import statistics
import sys
import time

os.environ.setdefault("GNNC_JIT", "sync")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "examples" / "python"))
import train_cora as T  # noqa: E402
import gnnc.nn  # noqa: E402
import torch_geometric.nn as pyg_nn  # noqa: E402


class Floor(torch.nn.Module):
    def __init__(self, fin, classes):
        super().__init__()
        self.a = torch.nn.Linear(fin, 16)
        self.b = torch.nn.Linear(16, classes)

    def forward(self, x, edge_index):
        x = F.dropout(x, p=0.5, training=self.training)
        x = F.relu(self.a(x))
        x = F.dropout(x, p=0.5, training=self.training)
        return self.b(x)


def epoch_ms(model, data, lr, epochs=220):
    x, ei, y, masks, _ = data
    rows = masks["train"].nonzero().squeeze(1)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=5e-4)
    model.train()
    times = []
    for _ in range(epochs):
        torch.cuda.synchronize()
        t = time.perf_counter()
        opt.zero_grad()
        out = model(x, ei)
        F.cross_entropy(out[rows], y[rows]).backward()
        opt.step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times[20:])


def main():
    dev = torch.device("cuda")
    data = T.load_planetoid(T.find_dataset("cora"), dev)
    fin, classes = data[0].shape[1], data[4]
    makers = {
        "mlp (no graph)": (lambda: Floor(fin, classes), 0.01),
        "gnnc GCN": (lambda: T.GCN(gnnc.nn, fin, classes), 0.01),
        "PyG GCN": (lambda: T.GCN(pyg_nn, fin, classes), 0.01),
        "gnnc GAT": (lambda: T.GAT(gnnc.nn, fin, classes), 0.005),
        "PyG GAT": (lambda: T.GAT(pyg_nn, fin, classes), 0.005),
    }
    for threaded in (True, False):
        torch.autograd.set_multithreading_enabled(threaded)
        where = "device thread" if threaded else "calling thread"
        best = {}
        for _ in range(2):  # two rounds, the faster kept
            for name, (make, lr) in makers.items():
                torch.manual_seed(0)
                ms = epoch_ms(make().to(dev), data, lr)
                best[name] = min(best.get(name, ms), ms)
        print(f"== backward on the {where}: median epoch ms", flush=True)
        for name, ms in best.items():
            print(f"  {name:16s} {ms:.3f}")
        floor = best["mlp (no graph)"]
        for m in ("GCN", "GAT"):
            g, p = best[f"gnnc {m}"], best[f"PyG {m}"]
            print(f"  {m}: PyG / gnnc {p / g:.2f}x; beyond the MLP's epoch: gnnc "
                  f"{g - floor:.3f}, PyG {p - floor:.3f}; PyG / the MLP {p / floor:.2f}x",
                  flush=True)


if __name__ == "__main__":
    main()
