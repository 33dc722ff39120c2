#!/usr/bin/env python3
"""Trains a 2-layer GCN or GAT on Cora with gnnc's layers (gnnc.nn).

The models and hyper-parameters are PyTorch Geometric's examples (the GCN and
GAT papers' settings): GCN 16 hidden units, dropout 0.5, Adam lr 0.01,
weight decay 5e-4; GAT 8 heads x 8 units, dropout 0.6 on features and on
attention, Adam lr 0.005, weight decay 5e-4; 200 epochs; the test accuracy is
taken at the epoch of best validation accuracy. `--model gcn-model` is the
GCN written with the library's `models.GCN` (gnnc's runs both layers as one
compiled function). With --compare-pyg the same
models run with torch_geometric.nn in the same process, for accuracy and
epoch-time ratios.

    python examples/python/train_cora.py --model gcn [--seeds 10] [--compare-pyg]
        [--cuda-graph] [--compile]

With --cuda-graph gnnc's model also trains with the whole training step
captured as one CUDA graph and replayed each epoch (docs/Python.md); with
--compile it also trains with the step compiled, in --compile-mode's mode:
the model and the loss as one torch.compile(fullgraph=True) function, and
under mode="reduce-overhead" on CUDA Adam's step compiled too (unless
--fused-adam; capturable=True; a step mark before each step), PyTorch's
compiled-optimizer recipe. (Compiling the model alone left the loss,
backward and Adam to eager mode between CUDA-graph replays: on an H100 host
in session 66 GCN's epoch was 15-21 % slower than eager, the whole step 22 %
faster; bench/results/checks-s66/.) Each is a run of its own beside the
eager one, with the same seeds, so that their epoch times come from the same
process.

Cora is read from $GNNC_DATASETS/cora, else from the repository's data/cora
(Cora and Citeseer ship with gnnc: data/README.md), else shared/datasets/cora
or ../shared/datasets/cora from the working directory upward. Runs on the GPU
when there is one (--device to choose).
"""

import argparse
import contextlib
import gzip
import os
import pathlib
import statistics
import sys
import time

import torch
import torch.nn.functional as F


def find_dataset(name):
    roots = []
    if os.environ.get("GNNC_DATASETS"):
        roots.append(pathlib.Path(os.environ["GNNC_DATASETS"]))
    # The copies shipped in the repository (data/README.md).
    roots.append(pathlib.Path(__file__).resolve().parents[2] / "data")
    here = pathlib.Path.cwd().resolve()
    for d in [here, *here.parents]:
        roots += [d / "shared" / "datasets", d.parent / "shared" / "datasets"]
    for r in roots:
        if (r / name / "meta.txt").is_file():
            return r / name
    sys.exit(f"train_cora: no data set '{name}' in {', '.join(map(str, roots[:3]))} "
             "or shared/datasets (set GNNC_DATASETS)")


def load_planetoid(path, device):
    meta = dict(line.split(maxsplit=1) for line in open(path / "meta.txt"))
    n, f = int(meta["nodes"]), int(meta["features"])
    with gzip.open(path / "edges.txt.gz", "rt") as fh:
        edges = [tuple(map(int, line.split())) for line in fh if line.strip()]
    edge_index = torch.tensor(edges, dtype=torch.int64).t().contiguous()
    x = torch.zeros(n, f)
    with gzip.open(path / "features.txt.gz", "rt") as fh:
        for line in fh:
            r, c, v = line.split()
            x[int(r), int(c)] = float(v)
    # PyG's NormalizeFeatures: rows sum to one.
    x = x / x.sum(1, keepdim=True).clamp(min=1)
    y = torch.tensor([int(v) for v in open(path / "labels.txt").read().split()])
    split = open(path / "split.txt").read().split()
    masks = {k: torch.tensor([s == k for s in split]) for k in ("train", "val", "test")}
    return (x.to(device), edge_index.to(device), y.to(device),
            {k: m.to(device) for k, m in masks.items()}, int(meta["classes"]))


class GCN(torch.nn.Module):
    def __init__(self, nn, fin, classes):
        super().__init__()
        self.conv1 = nn.GCNConv(fin, 16)
        self.conv2 = nn.GCNConv(16, classes)

    def forward(self, x, edge_index):
        x = F.dropout(x, p=0.5, training=self.training)
        x = F.relu(self.conv1(x, edge_index))
        x = F.dropout(x, p=0.5, training=self.training)
        return self.conv2(x, edge_index)


class GCNModel(torch.nn.Module):
    """The same network as GCN, written with the library's whole-model class
    (`models.GCN`: PyG's `torch_geometric.nn.models.GCN`, gnnc's
    `gnnc.nn.models.GCN`, which runs both layers as one compiled function),
    the input dropout in front of it as in PyG's example."""

    def __init__(self, nn, fin, classes):
        super().__init__()
        self.gcn = nn.models.GCN(fin, 16, 2, classes, dropout=0.5)

    def forward(self, x, edge_index):
        x = F.dropout(x, p=0.5, training=self.training)
        return self.gcn(x, edge_index)


class GAT(torch.nn.Module):
    def __init__(self, nn, fin, classes):
        super().__init__()
        self.conv1 = nn.GATConv(fin, 8, heads=8, dropout=0.6)
        self.conv2 = nn.GATConv(64, classes, heads=1, concat=False, dropout=0.6)

    def forward(self, x, edge_index):
        x = F.dropout(x, p=0.6, training=self.training)
        x = F.elu(self.conv1(x, edge_index))
        x = F.dropout(x, p=0.6, training=self.training)
        return self.conv2(x, edge_index)


SETTINGS = {"gcn": (GCN, 0.01), "gcn-model": (GCNModel, 0.01), "gat": (GAT, 0.005)}


def capture_step(model, opt, step):
    """The training step captured as one CUDA graph (PyTorch's whole-network
    recipe): warm-up steps on a side stream first (they compile gnnc's
    kernels and fill its graph cache, so that nothing in the captured step
    synchronises or allocates outside the graph's pool), then the parameters
    and the optimiser's state are put back to where they were, so that the
    captured run trains exactly like the eager one."""
    params = {k: v.detach().clone() for k, v in model.state_dict().items()}
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        step()
    with torch.no_grad():
        for k, v in model.state_dict().items():
            v.copy_(params[k])
        for state in opt.state.values():
            for t in state.values():
                if torch.is_tensor(t):
                    t.zero_()
    return graph


def train(nn, args, data, seed, device, mode="eager"):
    """Trains one model; `mode` is "eager", "graph" (the step captured as a
    CUDA graph) or "compile" (torch.compile with fullgraph=True)."""
    x, edge_index, y, masks, classes = data
    torch.manual_seed(seed)
    model_cls, lr = SETTINGS[args.model]
    model = model_cls(nn, x.shape[1], classes).to(device)
    cuda_graph = mode == "graph"
    # Under reduce-overhead on CUDA Adam's step is compiled (and replayed as
    # a CUDA graph) too: its state must then live on the device.
    graphs = (mode == "compile" and args.compile_mode == "reduce-overhead" and
              device.type == "cuda")
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=5e-4,
                           capturable=cuda_graph or graphs,
                           fused=args.fused_adam or None)
    # Training rows as indices (a boolean mask's gather has a data-dependent
    # size, which a CUDA graph cannot hold).
    train_rows = masks["train"].nonzero().squeeze(1)

    def loss_of():
        out = model(x, edge_index)
        return F.cross_entropy(out[train_rows], y[train_rows])

    opt_step = opt.step
    if mode == "compile":
        loss_of = torch.compile(loss_of, fullgraph=True, mode=args.compile_mode)
        if graphs and not args.fused_adam:
            # (A fused Adam is one kernel already: it runs eagerly.)
            opt_step = torch.compile(opt.step, mode=args.compile_mode)

    def step():
        if graphs:
            # A new step: the CUDA-graph trees may reuse the previous step's
            # outputs (the optimiser's graph ran since the loss's).
            torch.compiler.cudagraph_mark_step_begin()
        loss_of().backward()
        opt_step()

    graph = None
    if cuda_graph:
        model.train()
        graph = capture_step(model, opt, step)

    def epoch():
        if graph is not None:
            graph.replay()
        else:
            opt.zero_grad()
            step()
    return fit(model, data, args.epochs, epoch, device)


def fit(model, data, epochs, train_epoch, device, precision=contextlib.nullcontext):
    """Runs ``train_epoch()`` (the model in training mode, timed and
    synchronised) and an evaluation (under ``precision()``) per epoch:
    (the test accuracy at the epoch of best validation accuracy, the median
    epoch time in ms after the first 10 epochs: compilation, caches)."""
    x, edge_index, y, masks, _ = data
    best_val, test_at_best, times = -1.0, 0.0, []
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    for _ in range(epochs):
        sync()
        t0 = time.perf_counter()
        model.train()
        train_epoch()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
        model.eval()
        with torch.no_grad(), precision():
            pred = model(x, edge_index).argmax(1)
        acc = {k: (pred[m] == y[m]).float().mean().item() for k, m in masks.items()}
        if acc["val"] > best_val:
            best_val, test_at_best = acc["val"], acc["test"]
    return test_at_best, statistics.median(times[10:] or times)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=sorted(SETTINGS), default="gcn")
    p.add_argument("--dataset", default="cora")
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--seeds", type=int, default=1)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--compile", action="store_true",
                   help="also train gnnc's model with the training step compiled "
                        "(the model and the loss as one torch.compile(fullgraph=True) "
                        "function; under reduce-overhead on CUDA Adam's step too)")
    p.add_argument("--compile-mode", default=None,
                   choices=["default", "reduce-overhead", "max-autotune"],
                   help="torch.compile's mode for --compile (default: its default; "
                        "reduce-overhead replays CUDA graphs)")
    p.add_argument("--cuda-graph", action="store_true",
                   help="also train gnnc with the whole training step captured as one "
                        "CUDA graph and replayed each epoch (CUDA only)")
    p.add_argument("--fused-adam", action="store_true",
                   help="every run's Adam as one fused kernel (fused=True) instead of "
                        "PyTorch's default (foreach)")
    p.add_argument("--compare-pyg", action="store_true",
                   help="also train torch_geometric.nn's layers, same seeds")
    p.add_argument("--backward-on-calling-thread", action="store_true",
                   help="every run's backward on the calling thread "
                        "(torch.autograd.set_multithreading_enabled(False)) instead of "
                        "PyTorch's worker thread per device: no thread handoff per step")
    args = p.parse_args()
    if args.backward_on_calling_thread:
        torch.autograd.set_multithreading_enabled(False)
    device = torch.device(args.device)
    data = load_planetoid(find_dataset(args.dataset), device)

    import gnnc.nn
    runs = [("gnnc", gnnc.nn, "eager")]
    if args.cuda_graph:
        if device.type != "cuda":
            sys.exit("train_cora: --cuda-graph needs a CUDA device")
        runs.append(("gnnc+graph", gnnc.nn, "graph"))
    if args.compile:
        runs.append(("gnnc+compile", gnnc.nn, "compile"))
    if args.compare_pyg:
        import torch_geometric.nn
        runs.append(("pyg", torch_geometric.nn, "eager"))
    print(f"{args.model.upper()} on {args.dataset}, {args.epochs} epochs, "
          f"{args.seeds} seeds, {device}")
    summary = {}
    # Seeds outermost, the runs of one seed one after the other: a drift of
    # the host's speed during the process (seen at 10-20 % on the GPU
    # machine) then touches every library alike.
    accs = {name: [] for name, _, _ in runs}
    times = {name: [] for name, _, _ in runs}
    for seed in range(args.seeds):
        for name, nn, mode in runs:
            acc, ms = train(nn, args, data, seed, device, mode)
            accs[name].append(acc * 100)
            times[name].append(ms)
    for name, _, _ in runs:
        accs_, times_ = accs[name], times[name]
        mean = statistics.mean(accs_)
        std = statistics.stdev(accs_) if len(accs_) > 1 else 0.0
        epoch = statistics.median(times_)
        summary[name] = (mean, epoch)
        print(f"{name:12s} test accuracy {mean:.1f} +- {std:.1f} %   "
              f"epoch {epoch:.2f} ms (median; forward, backward, optimiser step)")
    if "pyg" in summary:
        pa, pt = summary["pyg"]
        for name in ("gnnc", "gnnc+graph", "gnnc+compile"):
            if name in summary:
                ga, gt = summary[name]
                print(f"{name} - pyg accuracy {ga - pa:+.1f} points; "
                      f"epoch speed-up {pt / gt:.2f}x")
    if "gnnc+compile" in summary:
        print(f"gnnc+compile epoch over eager gnnc's: "
              f"{summary['gnnc+compile'][1] / summary['gnnc'][1]:.2f}")


if __name__ == "__main__":
    main()
