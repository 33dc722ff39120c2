#!/usr/bin/env python3
"""Full-graph training epochs on the larger real graphs, gnnc's models
against PyG's with the same weights, in one process (issue 28: speed where
users feel it, a training loop; on graphs where the GPU, not the host,
bounds an epoch).

Models (PyG's `BasicGNN` constructors, the same on both sides, weights
loaded from PyG's): `GCN`, `GraphSAGE` (mean), `GAT` (4 heads), each
`num_layers` deep, `hidden` channels, ReLU, dropout 0.5. Inputs: random
features [N, in] and random labels of 16 classes (the graphs ship neither),
cross-entropy over every node, Adam (lr 0.01). Per model and graph: the
first epoch's loss on both sides (they start equal), then `--rounds`
rounds alternating gnnc and PyG, each `--epochs` epochs after 3 warm-up
ones, CUDA-event timed; the median epoch of the faster round is kept.

    python bench/train_large.py --datasets DIR [--graphs ego-twitter
        soc-slashdot0902] [--models gcn sage gat] [--hidden 128]

Prints a JSON line per measurement and a table (ratio = PyG / gnnc,
above 1: gnnc faster). Runs with GNNC_JIT=sync unless set (each graph's
own compiled kernels from the first epoch on)."""

import argparse
import json
import os
import pathlib
import statistics
import sys

os.environ.setdefault("GNNC_JIT", "sync")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from nn_layers import load_graph, median_ms  # noqa: E402

CLASSES = 16


def build(lib, name, fin, hidden, layers):
    models = lib.nn.models if hasattr(lib.nn, "models") else lib.nn
    kw = dict(in_channels=fin, hidden_channels=hidden, num_layers=layers,
              out_channels=CLASSES, dropout=0.5)
    if name == "gcn":
        return models.GCN(**kw)
    if name == "sage":
        return models.GraphSAGE(**kw)
    if name == "gat":
        return models.GAT(heads=4, **kw)
    raise ValueError(name)


def pair(name, fin, hidden, layers, dev):
    import gnnc.nn
    import torch_geometric.nn
    torch.manual_seed(0)
    pyg = build(torch_geometric, name, fin, hidden, layers).to(dev)
    ours = build(gnnc, name, fin, hidden, layers).to(dev)
    ours.load_state_dict(pyg.state_dict())
    return ours, pyg


def epoch_fn(model, x, ei, y):
    opt = torch.optim.Adam(model.parameters(), lr=0.01)

    def epoch():
        model.train()
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x, ei), y)
        loss.backward()
        opt.step()
        return loss
    return epoch


def timed(epoch, epochs):
    """The median epoch (ms) after 3 warm-up ones."""
    if torch.cuda.is_available():
        return median_ms(epoch, epochs, 3)
    import time  # (a smoke test on the CPU)
    for _ in range(3):
        epoch()
    times = []
    for _ in range(epochs):
        t0 = time.perf_counter()
        epoch()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", required=True)
    ap.add_argument("--graphs", nargs="+", default=["ego-twitter", "soc-slashdot0902"])
    ap.add_argument("--models", nargs="+", default=["gcn", "sage", "gat"])
    ap.add_argument("--features", type=int, default=128)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    rows = []
    for g in args.graphs:
        ei, n = load_graph(pathlib.Path(args.datasets) / g, dev)
        gen = torch.Generator(device=dev).manual_seed(1)
        x = torch.randn(n, args.features, device=dev, generator=gen)
        y = torch.randint(0, CLASSES, (n,), device=dev, generator=gen)
        for name in args.models:
            ours, pyg = pair(name, args.features, args.hidden, args.layers, dev)
            # Same weights, dropout off: the first losses agree.
            with torch.no_grad():
                ours.eval(), pyg.eval()
                l0 = [F.cross_entropy(m(x, ei), y).item() for m in (ours, pyg)]
            t = {}
            for _ in range(args.rounds):
                for side, m in (("gnnc", ours), ("pyg", pyg)):
                    ms = timed(epoch_fn(m, x, ei, y), args.epochs)
                    t[side] = min(t.get(side, float("inf")), ms)
            r = dict(graph=g, nodes=n, edges=int(ei.shape[1]), model=name,
                     hidden=args.hidden, layers=args.layers, gnnc_ms=t["gnnc"],
                     pyg_ms=t["pyg"], ratio=t["pyg"] / t["gnnc"],
                     eval_loss_gnnc=l0[0], eval_loss_pyg=l0[1],
                     peak_mb=(torch.cuda.max_memory_allocated() / 2**20
                              if dev == "cuda" else None))
            print(json.dumps(r), flush=True)
            rows.append(r)
            del ours, pyg
            if dev == "cuda":
                torch.cuda.empty_cache()
    print("\n| graph | model | gnnc ms | PyG ms | PyG / gnnc | eval loss gnnc / PyG |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    for r in rows:
        print(f"| {r['graph']} | {r['model']} | {r['gnnc_ms']:.2f} | {r['pyg_ms']:.2f} | "
              f"{r['ratio']:.2f} | {r['eval_loss_gnnc']:.5f} / {r['eval_loss_pyg']:.5f} |")


if __name__ == "__main__":
    main()
