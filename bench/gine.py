#!/usr/bin/env python3
"""GINEConv on batches of QM9 molecules (issue 31: >= 2x PyG's forward+
backward): PyG's layers against gnnc.nn's, one run, the same weights.

Model (both sides): an atom encoder ``Linear(C, H)`` on the one-hot atomic
numbers, then L ``GINEConv(MLP(H, H, H), edge_dim=D, train_eps=True)``
layers with ReLU between, each projecting the bond features (D channels,
a seeded random one-hot bond type per bond, the same for both directions)
with its own ``lin``. Batches as bench/molecules.py builds them (its QM9
loader: B consecutive molecules, one edge_index).

Per side: forward under ``torch.no_grad()`` and forward+backward
(``out.square().mean().backward()``), median wall time per iteration with a
synchronisation before and after each, ``--rounds`` rounds alternating the
sides (the minimum of the medians kept); outputs and parameter gradients
compared (max |diff|).

    python bench/gine.py ../shared/datasets/qm9 [--batch 4096] [--out gine.json]
    python bench/gine.py ../shared/datasets/qm9 --device cpu --batch 16 \\
        --iters 2 --warmup 1 --rounds 1      # smoke test

``--compile``: both models under ``torch.compile`` (default mode, whole
graph for gnnc's), the same measurement after the compilation's warm-up.

``--layer-only``: one GINEConv layer instead of the model (the second
layer's weights; input the model's hidden features after the encoder and a
ReLU, requiring grad), forward and forward+backward measured the way
bench/nn_layers.py measures every other layer (issue 28's per-layer
table): ``(layer(x, edge_index, edge_attr) * dy).sum().backward()``; the
input's gradient compared too.

Runs with GNNC_JIT=sync unless set. Ratio = PyG time / gnnc time.
"""

import argparse
import json
import os
import pathlib
import sys

os.environ.setdefault("GNNC_JIT", "sync")

import torch  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import molecules  # noqa: E402  (the QM9 loader and the timing helpers)


class Net(torch.nn.Module):
    def __init__(self, lib, channels, hidden, layers, edge_dim):
        super().__init__()
        self.encoder = torch.nn.Linear(channels, hidden)

        def mlp():
            return torch.nn.Sequential(torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
                                       torch.nn.Linear(hidden, hidden))

        self.convs = torch.nn.ModuleList(
            lib.GINEConv(mlp(), train_eps=True, edge_dim=edge_dim) for _ in range(layers))

    def forward(self, x, edge_index, edge_attr):
        x = self.encoder(x)
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index, edge_attr)
            if i < len(self.convs) - 1:
                x = torch.relu(x)
        return x


def bond_features(edge_index, dim, seed):
    """A one-hot bond type per undirected bond (both directions alike)."""
    lo = torch.minimum(edge_index[0], edge_index[1])
    hi = torch.maximum(edge_index[0], edge_index[1])
    key = (lo * 1_000_003 + hi * 7919 + seed) % 2_147_483_647
    kind = (key * 48271 % 2_147_483_647) % dim
    return torch.nn.functional.one_hot(kind, dim).float()


def probe_setup(dataset: pathlib.Path, device: torch.device, batch: int = 4096):
    """The profiling probes' model pair and batch (bench/probes/host/
    gine_step.py, gine_kernels.py, ...): seed 0, 16 atom channels, hidden
    64, 3 layers, edge_dim 4, `batch` molecules; (pyg, gnnc, x, edge_index,
    edge_attr), the models on `device`."""
    import gnnc.nn
    import torch_geometric.nn as pyg_nn
    torch.manual_seed(0)
    pyg = Net(pyg_nn, 16, 64, 3, 4)
    ours = Net(gnnc.nn, 16, 64, 3, 4)
    ours.load_state_dict(pyg.state_dict())
    x, edge_index, _ = molecules.QM9(dataset).batch(0, batch, 16, device)
    edge_attr = bond_features(edge_index.cpu(), 4, 0).to(device)
    return pyg.to(device), ours.to(device), x, edge_index, edge_attr


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", type=pathlib.Path, help="the QM9 folder")
    ap.add_argument("--batch", type=int, default=4096, help="molecules per batch")
    ap.add_argument("--channels", type=int, default=16, help="one-hot atom channels")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--edge-dim", type=int, default=4)
    ap.add_argument("--compile", action="store_true",
                    help="both models under torch.compile (default mode)")
    ap.add_argument("--layer-only", action="store_true",
                    help="one GINEConv layer's forward+backward, not the model's step")
    molecules.timing_arguments(ap, iters=50, warmup=10)
    args = ap.parse_args(argv)
    device = torch.device(args.device)

    import gnnc.nn
    import torch_geometric.nn as pyg_nn
    torch.manual_seed(args.seed)
    pyg = Net(pyg_nn, args.channels, args.hidden, args.layers, args.edge_dim)
    with torch.no_grad():  # non-zero eps (PyG initialises it to 0)
        for name, p in pyg.named_parameters():
            if name.endswith("eps"):
                p.uniform_(-0.2, 0.2)
    ours = Net(gnnc.nn, args.channels, args.hidden, args.layers, args.edge_dim)
    ours.load_state_dict(pyg.state_dict())
    sides = {"pyg": pyg.to(device).train(), "gnnc": ours.to(device).train()}
    if args.layer_only:
        sides = {name: m.convs[min(1, args.layers - 1)] for name, m in sides.items()}
    if args.compile:
        sides = {"pyg": torch.compile(sides["pyg"]),
                 "gnnc": torch.compile(sides["gnnc"], fullgraph=True)}

    data = molecules.QM9(args.dataset)
    x, edge_index, sizes = data.batch(0, args.batch, args.channels, device)
    edge_attr = bond_features(edge_index.cpu(), args.edge_dim, args.seed).to(device)
    batch = (x, edge_index, edge_attr)
    dy = None
    if args.layer_only:
        # The layer's input: the hidden features a layer of the model reads.
        with torch.no_grad():
            h = torch.relu(pyg.encoder(x))
        batch = (h.requires_grad_(), edge_index, edge_attr)
        dy = torch.randn(x.size(0), args.hidden, device=device,
                         generator=torch.Generator(device=device).manual_seed(args.seed))

    def forward(m):
        def f(*b):
            with torch.no_grad():
                m(*b)
        return f

    def objective(y):
        """The model's loss, or (--layer-only) nn_layers.py's (y * dy).sum()."""
        return y.square().mean() if dy is None else y.mul(dy).sum()

    def train(m):
        params = list(m.parameters())

        def f(*b):
            for p in params:
                p.grad = None
            b[0].grad = None  # (the layer's input; the model's x has none)
            objective(m(*b)).backward()
        return f

    results = {}
    for kind, make in (("forward", forward), ("forward_backward", train)):
        best = {}
        for _ in range(args.rounds):
            for name, m in sides.items():
                ms = molecules.median_ms(make(m), [batch], args.iters, args.warmup, device)
                best[name] = min(best.get(name, ms), ms)
        results[kind] = best
    outs, grads = {}, {}
    for name, m in sides.items():
        m.zero_grad(set_to_none=True)
        batch[0].grad = None
        y = m(*batch)
        objective(y).backward()
        outs[name] = y.detach()
        grads[name] = {k: p.grad for k, p in m.named_parameters()}
        if dy is not None:  # (and the layer's input gradient)
            grads[name]["<input>"] = batch[0].grad
    diff_out = float((outs["gnnc"] - outs["pyg"]).abs().max())
    # Per gradient: (max |diff|, the same relative to the largest PyG value
    # of that tensor: sums over every node and edge are large, so their
    # absolute float32 error is too).
    diff_grad = rel_grad = 0.0
    for k, g in grads["pyg"].items():
        d = float((grads["gnnc"][k] - g).abs().max())
        diff_grad = max(diff_grad, d)
        rel_grad = max(rel_grad, d / max(float(g.abs().max()), 1e-30))
    print(f"{'torch.compile' if args.compile else 'eager'}; "
          f"{'one GINEConv layer' if args.layer_only else 'the model'}; device "
          f"{torch.cuda.get_device_name(device) if device.type == 'cuda' else 'cpu'}; "
          f"batch {args.batch} molecules: {x.size(0)} nodes, {edge_index.size(1)} edges; "
          f"hidden {args.hidden}, {args.layers} layers, edge_dim {args.edge_dim}")
    print("| step | PyG ms | gnnc ms | PyG / gnnc |")
    print("| --- | --- | --- | --- |")
    for kind, r in results.items():
        print(f"| {kind} | {r['pyg']:.3f} | {r['gnnc']:.3f} | {r['pyg'] / r['gnnc']:.2f} |")
    print(f"max |diff| out {diff_out:.2e}, parameter gradients {diff_grad:.2e} "
          f"(relative to each tensor's max |PyG| {rel_grad:.1e})")
    if args.out:
        args.out.write_text(json.dumps(dict(vars(args), dataset=str(args.dataset),
                                            out=str(args.out), results=results,
                                            max_abs_diff_out=diff_out,
                                            max_abs_diff_grad=diff_grad,
                                            max_rel_diff_grad=rel_grad), indent=1))


if __name__ == "__main__":
    main()
