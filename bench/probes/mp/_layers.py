# The set-up the MessagePassing probes share (run from the repository root):
# the benches' modules, the graph by name, and the two sides of a layer.
import os
import sys
import importlib.util

os.environ.setdefault("GNNC_JIT", "sync")
for _p in ("python/tests", "bench", "examples/python"):
    sys.path.insert(0, _p)
import mp_layers  # noqa: E402,F401  examples/python's, before mp_builtin puts bench/ first
import mp_builtin  # noqa: E402

__all__ = ["bench", "graph", "sides", "cases", "step", "mp_layers", "mp_builtin"]

_spec = importlib.util.spec_from_file_location("mp_bench", "bench/mp_layers.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def graph(datasets, name, dev):
    """(edge_index, nodes) of a data set under ``datasets`` or a synthetic
    graph of the scoreboard (its graphs.py in ``datasets``'s sibling peers/)."""
    args = type("A", (), {"graph": name, "datasets": str(datasets),
                          "peers": str(datasets.parent / "peers")})
    return bench.graph(args, dev)


def sides(name, c, ei, n, x, dev):
    """(call, ((label, layer), (label, layer))): a user layer of
    examples/python/mp_layers.py and PyG's ("gnnc", "pyg"), or a subclass of
    python/tests/test_message_passing.py and the built-in gnnc.nn layer
    ("sub", "builtin"), with the same weights."""
    if name in bench.LAYERS:
        ours, theirs, extra = bench.pair(name, c, ei, n, dev)
        if name == "FAConv":
            def call(layer, xx):
                return layer(xx, xx, ei)
        else:
            def call(layer, xx):
                return layer(xx, ei, *extra)
        return call, (("gnnc", ours), ("pyg", theirs))
    sub, built = mp_builtin.pairs(c, 4)[name]
    a, b = sub().to(dev), built().to(dev)

    def call(layer, xx):
        return layer(xx, ei)
    call(b, x)
    try:
        a.load_state_dict(b.state_dict())
    except Exception:
        pass
    return call, (("sub", a), ("builtin", b))


def step(layer, call, x):
    """One forward+backward step into x and the layer's parameters (the
    output's gradient drawn at the first step)."""
    import torch
    dy = [None]

    def run():
        for p in layer.parameters():
            p.grad = None
        x.grad = None
        out = call(layer, x)
        if dy[0] is None:
            dy[0] = torch.randn_like(out)
        (out * dy[0]).sum().backward()
    return run


def cases(datasets, graphs, names, c, dev):
    """(name, call, sides, x) for each layer name on each graph (comma
    lists, as the probes take them), printing a header line per graph."""
    import torch
    for gname in graphs.split(","):
        ei, n = graph(datasets, gname, dev)
        print("==", gname, n, ei.size(1), flush=True)
        x = torch.randn(n, c, device=dev)
        for name in names.split(","):
            call, pair = sides(name, c, ei, n, x, dev)
            yield name, call, pair, x
