"""What the replay probes share (counts.py, kernels.py, rounds.py): their
arguments and, per graph and layer, nn_layers.py's setup (the graph, seeded
64-channel features and output gradient, the gnnc/PyG layer pair with the
same weights)."""
import argparse
import os
import pathlib
import sys

os.environ.setdefault("GNNC_JIT", "sync")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
import torch  # noqa: E402
import nn_layers as B  # noqa: E402


def arguments(doc: str, graphs, layers, **extra):
    """The probe's parsed arguments: --datasets, --graphs, --layers,
    --channels, then `extra` (name: default, an int option each)."""
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("--datasets", required=True)
    ap.add_argument("--graphs", nargs="+", default=list(graphs))
    ap.add_argument("--layers", nargs="+", default=list(layers))
    ap.add_argument("--channels", type=int, default=64)
    for name, default in extra.items():
        ap.add_argument(f"--{name}", type=type(default), default=default,
                        nargs="+" if isinstance(default, list) else None)
    return ap.parse_args()


def cases(args, log=None, device="cuda"):
    """(graph, layer name, edge_index, x, dy, gnnc layer, PyG layer) for
    every graph and layer of `args`, on `device`; `log(graph, n,
    edge_index)` first per graph where given."""
    dev = torch.device(device)
    c = args.channels
    for g in args.graphs:
        ei, n = B.load_graph(pathlib.Path(args.datasets) / g, dev)
        if log is not None:
            log(g, n, ei)
        gen = torch.Generator(device=dev).manual_seed(1)
        x = torch.randn(n, c, device=dev, generator=gen)
        dy = torch.randn(n, c, device=dev, generator=gen)
        for name in args.layers:
            ours, pyg = B.pair(name, c, dev)
            yield g, name, ei, x, dy, ours, pyg


def stepper(layer, x, ei, dy, before=None):
    """nn_layers.py's step on a fresh leaf copy of `x`: out = layer(x, ei);
    (out * dy).sum().backward(); `before(out)` first where given."""
    xx = x.clone().requires_grad_()

    def step():
        out = layer(xx, ei)
        if before is not None:
            before(out)
        out.mul(dy).sum().backward()
    return step
