#!/usr/bin/env python3
"""A 3-layer GCN on batches of QM9 molecules: PyG's models.GCN against gnnc,
per layer and as one fused model, in one run with the same weights.

Models (in -> hidden -> ... -> out, ReLU between layers, weights loaded from
PyG's into both gnnc models):

* ``pyg``: ``torch_geometric.nn.models.GCN(C, H, L, O)``;
* ``gnnc_layers``: L ``gnnc.nn.GCNConv`` with ``torch.relu`` between (one
  compiled function per layer, the ``x W^T`` in PyTorch);
* ``gnnc_model``: ``gnnc.nn.GCN(C, H, L, O)``, the whole model one compiled
  function (on batches of small graphs the graph_block mapping: one launch).

Data: a QM9 folder (``edges.txt.gz``: ``src dst`` per line, both directions;
``graph_ids.txt.gz``: the molecule of each node, nondecreasing;
``node_labels.txt.gz``: the atomic number of each node). A batch is B
consecutive molecules as PyG's DataLoader makes it: the disjoint union, node
ids renumbered from 0, one ``edge_index``. Features: the one-hot of the
atomic number over C channels (channel = atomic number; QM9's heavy atoms
are 6..9, so C = 16 leaves room for every element up to sulfur; a larger
number is an error). Batch k holds molecules ``k*B .. (k+1)*B - 1``.

Per model: forward under ``torch.no_grad()`` and forward+backward
(``out.square().mean().backward()``, parameter gradients set to None before
each step), the median wall time per iteration over ``--iters`` iterations
after ``--warmup``, ``torch.cuda.synchronize()`` before and after each
iteration; ``--rounds`` rounds alternate the models and the minimum of the
medians is kept. With ``--batches K`` iteration i runs batch ``i mod K`` (a
loader's distinct graphs; the warm-up covers each). Outputs and parameter
gradients are compared with PyG's (max |diff|) on batch 0. On CUDA
``--kernels`` counts the kernels of one forward and one forward+backward
(torch.profiler).

    python bench/molecules.py ../shared/datasets/qm9 --out molecules.json
    python bench/molecules.py ../shared/datasets/qm9 --batches 8 --out m8.json
    # CPU smoke test (the reference evaluator): tiny sizes
    python bench/molecules.py ../shared/datasets/qm9 --device cpu --batch 32 \\
        --iters 3 --warmup 1 --rounds 1 --out /tmp/m.json

Runs with GNNC_JIT=sync unless set (each graph's own compiled kernels, not
the fallback that runs while they compile). Prints a table (ratio = PyG time
/ gnnc time: above 1 means gnnc is faster) and writes JSON to ``--out``.
"""

import argparse
import gzip
import json
import os
import pathlib
import statistics
import sys
import time

os.environ.setdefault("GNNC_JIT", "sync")

import numpy as np  # noqa: E402
import torch  # noqa: E402

MODELS = ("pyg", "gnnc_layers", "gnnc_model")


# --------------------------------------------------------------------------
# Data.


def _ints(path: pathlib.Path) -> np.ndarray:
    with gzip.open(path, "rb") as f:
        return np.array(f.read().split(), dtype=np.int64)


class QM9:
    """The folder's molecules: node ranges per molecule, edges by molecule."""

    def __init__(self, folder: pathlib.Path):
        self.edges = _ints(folder / "edges.txt.gz").reshape(-1, 2)
        graph = _ints(folder / "graph_ids.txt.gz")
        self.labels = _ints(folder / "node_labels.txt.gz")
        if graph.size != self.labels.size:
            raise SystemExit(f"{folder}: {graph.size} graph ids but "
                             f"{self.labels.size} node labels")
        if graph.size and np.any(np.diff(graph) < 0):
            raise SystemExit(f"{folder}: graph ids are not nondecreasing")
        self.molecules = int(graph.max()) + 1 if graph.size else 0
        # node_ptr[m] .. node_ptr[m + 1]: the nodes of molecule m.
        self.node_ptr = np.zeros(self.molecules + 1, dtype=np.int64)
        np.cumsum(np.bincount(graph, minlength=self.molecules), out=self.node_ptr[1:])
        src_graph = graph[self.edges[:, 0]]
        if np.any(src_graph != graph[self.edges[:, 1]]):
            raise SystemExit(f"{folder}: an edge joins two molecules")
        order = np.argsort(src_graph, kind="stable")
        self.edges, src_graph = self.edges[order], src_graph[order]
        self.edge_ptr = np.searchsorted(src_graph, np.arange(self.molecules + 1))

    def batch(self, first: int, count: int, channels: int, device):
        """(x [N, channels] one-hot of the atomic numbers, edge_index [2, E],
        sizes of the molecules) of molecules first .. first + count - 1."""
        last = first + count
        if last > self.molecules:
            raise SystemExit(f"batch of molecules {first}..{last - 1}: the data set "
                             f"has {self.molecules}")
        lo, hi = self.node_ptr[first], self.node_ptr[last]
        z = torch.from_numpy(self.labels[lo:hi])
        if z.numel() and int(z.max()) >= channels:
            raise SystemExit(f"atomic number {int(z.max())} does not fit one-hot "
                             f"features of {channels} channels (--channels)")
        x = torch.nn.functional.one_hot(z, channels).float()
        e = self.edges[self.edge_ptr[first]:self.edge_ptr[last]] - lo
        edge_index = torch.from_numpy(np.ascontiguousarray(e.T))
        sizes = np.diff(self.node_ptr[first:last + 1])
        return x.to(device), edge_index.to(device), sizes


# --------------------------------------------------------------------------
# Models.


class PerLayer(torch.nn.Module):
    """gnnc.nn.GCNConv layers with ReLU between (named as PyG's `convs`)."""

    def __init__(self, sizes):
        super().__init__()
        import gnnc.nn
        self.convs = torch.nn.ModuleList(gnnc.nn.GCNConv(a, b)
                                         for a, b in zip(sizes, sizes[1:]))

    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if i < len(self.convs) - 1:
                x = torch.relu(x)
        return x


def models(args, device):
    import gnnc.nn
    from torch_geometric.nn.models import GCN
    torch.manual_seed(args.seed)
    pyg = GCN(args.channels, args.hidden, args.layers, args.out_channels)
    with torch.no_grad():  # non-zero biases (PyG's are initialised to 0)
        for name, p in pyg.named_parameters():
            if name.endswith("bias"):
                p.uniform_(-0.1, 0.1)
    sizes = [args.channels] + [args.hidden] * (args.layers - 1) + [args.out_channels]
    layers = PerLayer(sizes)
    model = gnnc.nn.GCN(args.channels, args.hidden, args.layers, args.out_channels)
    layers.load_state_dict(pyg.state_dict())
    model.load_state_dict(pyg.state_dict())
    return {name: m.to(device).eval() for name, m in
            zip(MODELS, (pyg, layers, model))}


# --------------------------------------------------------------------------
# Timing.


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def median_ms(step, batches, iters, warmup, device):
    """Median wall time of step(batch) per iteration, batch i mod K."""
    for i in range(max(warmup, len(batches))):
        step(*batches[i % len(batches)])
    times = []
    for i in range(iters):
        b = batches[i % len(batches)]
        sync(device)
        t0 = time.perf_counter()
        step(*b)
        sync(device)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def steps(model):
    params = list(model.parameters())

    def forward(x, edge_index):
        with torch.no_grad():
            model(x, edge_index)

    def train(x, edge_index):
        for p in params:
            p.grad = None
        model(x, edge_index).square().mean().backward()

    return {"forward": forward, "forward_backward": train}


def differences(ms, x, edge_index):
    """max |out - PyG's out| and max |grad - PyG's grad| over the
    parameters, per gnnc model."""
    out, grads = {}, {}
    for name, m in ms.items():
        m.zero_grad(set_to_none=True)
        y = m(x, edge_index)
        y.square().mean().backward()
        out[name] = y.detach()
        grads[name] = {k: p.grad for k, p in m.named_parameters()}
    rows = {}
    for name in MODELS[1:]:
        dg = max((float((grads[name][k] - g).abs().max()) for k, g in grads["pyg"].items()
                  if g.numel()), default=0.0)
        do = float((out[name] - out["pyg"]).abs().max()) if out["pyg"].numel() else 0.0
        rows[name] = dict(max_abs_diff_out=do, max_abs_diff_grad=dg)
    return rows


def kernels(step, batch):
    """CUDA kernels launched by one step (torch.profiler)."""
    from torch.profiler import ProfilerActivity, profile
    step(*batch)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step(*batch)
        torch.cuda.synchronize()
    return sum(1 for e in prof.events()
               if e.device_type == torch.autograd.DeviceType.CUDA and
               not e.name.startswith(("Memcpy", "Memset")))


# --------------------------------------------------------------------------


def timing_arguments(ap, iters, warmup):
    """The options every bench built on these helpers takes: timing
    (--iters, --warmup, --rounds), --seed, --device and --out."""
    ap.add_argument("--iters", type=int, default=iters)
    ap.add_argument("--warmup", type=int, default=warmup)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out", type=pathlib.Path, help="JSON results")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", type=pathlib.Path, help="the QM9 folder")
    ap.add_argument("--batch", type=int, default=4096, help="molecules per batch")
    ap.add_argument("--batches", type=int, default=1,
                    help="distinct batches cycled over the iterations")
    ap.add_argument("--channels", type=int, default=16, help="one-hot input channels")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--out-channels", type=int, default=64)
    ap.add_argument("--layers", type=int, default=3)
    timing_arguments(ap, iters=50, warmup=10)
    ap.add_argument("--kernels", action="store_true",
                    help="count the CUDA kernels of one step per model")
    args = ap.parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(args.seed)

    data = QM9(args.dataset)
    batches, shapes = [], []
    for k in range(args.batches):
        x, edge_index, sizes = data.batch(k * args.batch, args.batch, args.channels, device)
        batches.append((x, edge_index))
        shapes.append(dict(molecules=int(sizes.size), nodes=int(x.size(0)),
                           edges=int(edge_index.size(1)),
                           largest=int(sizes.max()) if sizes.size else 0))
    ms = models(args, device)
    diff = differences(ms, *batches[0])

    times = {name: {} for name in MODELS}
    for _ in range(args.rounds):  # alternating, the minimum of the medians
        for name, m in ms.items():
            for kind, step in steps(m).items():
                t = median_ms(step, batches, args.iters, args.warmup, device)
                times[name][kind] = min(times[name].get(kind, float("inf")), t)
    counts = {}
    if args.kernels and device.type == "cuda":
        counts = {name: {kind: kernels(step, batches[0])
                         for kind, step in steps(m).items()}
                  for name, m in ms.items()}

    rows = []
    for name in MODELS:
        row = dict(model=name, forward_ms=times[name]["forward"],
                   forward_backward_ms=times[name]["forward_backward"])
        if name != "pyg":
            row["pyg_over_forward"] = times["pyg"]["forward"] / row["forward_ms"]
            row["pyg_over_forward_backward"] = (times["pyg"]["forward_backward"] /
                                                row["forward_backward_ms"])
            row.update(diff[name])
        if name in counts:
            row["kernels"] = counts[name]
        rows.append(row)

    print(f"QM9 GCN {args.channels}->{args.hidden}x{args.layers}->{args.out_channels}, "
          f"{args.batches} batch(es) of {args.batch} molecules "
          f"({', '.join(str(s['nodes']) + ' nodes/' + str(s['edges']) + ' edges' for s in shapes[:3])}"
          f"{', ...' if len(shapes) > 3 else ''}), {device}, median of {args.iters}")
    print("| model | forward ms | PyG/this | fwd+bwd ms | PyG/this | max diff out | "
          "max diff grad |" + (" kernels fwd / fwd+bwd |" if counts else ""))
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |" + (" ---: |" if counts else ""))
    for r in rows:
        ratio_f = f"{r['pyg_over_forward']:.2f}" if "pyg_over_forward" in r else ""
        ratio_b = (f"{r['pyg_over_forward_backward']:.2f}"
                   if "pyg_over_forward_backward" in r else "")
        d_out = f"{r['max_abs_diff_out']:.1e}" if "max_abs_diff_out" in r else ""
        d_grad = f"{r['max_abs_diff_grad']:.1e}" if "max_abs_diff_grad" in r else ""
        k = (f" {r['kernels']['forward']} / {r['kernels']['forward_backward']} |"
             if "kernels" in r else "")
        print(f"| {r['model']} | {r['forward_ms']:.3f} | {ratio_f} | "
              f"{r['forward_backward_ms']:.3f} | {ratio_b} | {d_out} | {d_grad} |{k}")

    if args.out:
        import torch_geometric
        info = dict(device=(torch.cuda.get_device_name(device) if device.type == "cuda"
                            else "cpu"),
                    torch=torch.__version__, torch_geometric=torch_geometric.__version__,
                    gnnc_jit=os.environ.get("GNNC_JIT"),
                    args={k: str(v) if isinstance(v, pathlib.Path) else v
                          for k, v in vars(args).items()},
                    batches=shapes, rows=rows)
        args.out.write_text(json.dumps(info, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
