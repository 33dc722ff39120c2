#!/usr/bin/env python3
"""gnnc.MessagePassing against the built-in gnnc.nn layers (issue 33: the
GAT, GATv2, Transformer and GIN written as subclasses run within 10% of the
built-in layers' speed).

The subclasses are the ones the tests check for equal outputs and
gradients (python/tests/test_message_passing.py: MyGAT, MyGATv2,
MyTransformer, MyGIN; GAT and GATv2 add PyG's self-loops in their forward
with gnnc.utils, as a PyG user writes them with torch_geometric.utils).
Two more forms are measured beside them: "gat-pyg-form" (MyGATPyG, the
attention terms computed in forward by PyTorch as PyG's GATConv does,
where MyGAT writes them in message and gnnc computes them per node) and
"gin-nn-in-update" (MyGINUpdate, the MLP traced into gnnc's function,
where MyGIN applies it in forward as PyG's GINConv does). Per
graph, 64 channels (4 heads of 16): forward+backward through autograd, two
ways: the CUDA-event time of single steps started from an idle GPU (as
bench/nn_layers.py), and "loop", the time per step of a block of steps run
back to back (a training loop, one synchronisation per block); and the host
time per forward call under torch.no_grad(). ratio = built-in time /
subclass time (>= 0.91 is "within 10%").

Both layers are host-bound on the GPU machine, whose host time jitters by
10-20 % from one second to the next; so the two sides alternate in many
short rounds (--rounds, the order flipped every round), each side's figure
is the median over its rounds, and the ratios' spread is shown as the
quartiles of the per-round ratios (loop). The paired columns are the
median (and quartiles) of the per-round ratios themselves: the two sides of
a round run back to back, so a drift of the host's speed over the run,
which can skew the ratio of the two medians, cancels in each pair.

    python bench/mp_builtin.py --datasets DIR [--graphs musae-github pubmed]
"""

import argparse
import os
import pathlib
import statistics
import sys
import time

os.environ.setdefault("GNNC_JIT", "sync")
import torch  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "python" / "tests"))
import nn_layers  # noqa: E402  (graph loading, CUDA-event timing)


def pairs(c, heads):
    import gnnc.nn
    import test_message_passing as T
    h = c // heads

    def mlp():
        return torch.nn.Sequential(torch.nn.Linear(c, c), torch.nn.ReLU(),
                                   torch.nn.Linear(c, c))
    return {
        "gat": (lambda: T.MyGAT(c, h, heads), lambda: gnnc.nn.GATConv(c, h, heads=heads)),
        "gatv2": (lambda: T.MyGATv2(c, h, heads),
                  lambda: gnnc.nn.GATv2Conv(c, h, heads=heads)),
        "transformer": (lambda: T.MyTransformer(c, h, heads),
                        lambda: gnnc.nn.TransformerConv(c, h, heads=heads)),
        "gin": (lambda: T.MyGIN(mlp()), lambda: gnnc.nn.GINConv(mlp(), train_eps=True)),
        "gat-pyg-form": (lambda: T.MyGATPyG(c, h, heads),
                         lambda: gnnc.nn.GATConv(c, h, heads=heads)),
        "gin-nn-in-update": (lambda: T.MyGINUpdate(mlp()),
                             lambda: gnnc.nn.GINConv(mlp(), train_eps=True)),
    }


def loop_ms(step, reps):
    """Milliseconds per step of ``reps`` steps run back to back, as in a
    training loop (one synchronisation at the end)."""
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / reps * 1e3


def quartiles(values):
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def host_us(layer, x, ei, calls=200):
    with torch.no_grad():
        for _ in range(20):
            layer(x, ei)
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(calls):
            layer(x, ei)
        h = (time.perf_counter() - t) / calls * 1e6
        torch.cuda.synchronize()
    return h


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", required=True)
    ap.add_argument("--graphs", nargs="+", default=["musae-github", "pubmed"])
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--reps", type=int, default=10,
                    help="steps per side and round (events and loop each)")
    ap.add_argument("--rounds", type=int, default=15,
                    help="rounds of built-in and subclass alternating (the "
                         "order flipped every round)")
    ap.add_argument("--warmup", type=int, default=5)
    args = ap.parse_args()
    dev = torch.device("cuda")
    print(f"device {torch.cuda.get_device_name(dev)}, {args.channels} channels")
    print("| graph | layer | built-in ms | subclass ms | built-in / subclass | "
          "loop built-in ms | loop subclass ms | loop ratio | loop ratio quartiles | "
          "paired events ratio (quartiles) | paired loop ratio (quartiles) | "
          "host built-in us | host subclass us | max diff |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for g in args.graphs:
        ei, n = nn_layers.load_graph(pathlib.Path(args.datasets) / g, dev)
        gen = torch.Generator(device=dev).manual_seed(1)
        x = torch.randn(n, args.channels, device=dev, generator=gen)
        for name, (mine, builtin) in pairs(args.channels, args.heads).items():
            torch.manual_seed(0)
            theirs = builtin().to(dev)
            with torch.no_grad():
                for p in theirs.parameters():
                    if p.dim() == 1:
                        p.uniform_(-0.5, 0.5)
            ours = mine().to(dev)
            ours.load_state_dict(theirs.state_dict())
            xb, xm = x.clone().requires_grad_(), x.clone().requires_grad_()
            with torch.no_grad():
                diff = float((ours(xm, ei) - theirs(xb, ei)).abs().max())
            dy = torch.randn(theirs(xb, ei).shape, device=dev, generator=gen)

            def step(layer, xx):
                return lambda: layer(xx, ei).mul(dy).sum().backward()
            sides = (("builtin", step(theirs, xb)), ("mine", step(ours, xm)))
            for _, f in sides:
                for _ in range(args.warmup):
                    f()
            ev = {"builtin": [], "mine": []}
            loop = {"builtin": [], "mine": []}
            for r in range(args.rounds):
                for side, f in (sides if r % 2 == 0 else sides[::-1]):
                    ev[side].append(nn_layers.median_ms(f, args.reps, 1))
                    loop[side].append(loop_ms(f, args.reps))
            t = {k: statistics.median(v) for k, v in ev.items()}
            lp = {k: statistics.median(v) for k, v in loop.items()}
            loop_pairs = [b / m for b, m in zip(loop["builtin"], loop["mine"])]
            ev_pairs = [b / m for b, m in zip(ev["builtin"], ev["mine"])]
            q1, q3 = quartiles(loop_pairs)
            e1, e3 = quartiles(ev_pairs)
            hosts = [(host_us(theirs, x, ei, 50), host_us(ours, x, ei, 50))
                     for _ in range(5)]
            hb = statistics.median(h[0] for h in hosts)
            hm = statistics.median(h[1] for h in hosts)
            print(f"| {g} | {name} | {t['builtin']:.3f} | {t['mine']:.3f} | "
                  f"{t['builtin'] / t['mine']:.2f} | {lp['builtin']:.3f} | "
                  f"{lp['mine']:.3f} | {lp['builtin'] / lp['mine']:.2f} | "
                  f"{q1:.2f}-{q3:.2f} | {statistics.median(ev_pairs):.2f} ({e1:.2f}-{e3:.2f}) | "
                  f"{statistics.median(loop_pairs):.2f} ({q1:.2f}-{q3:.2f}) | "
                  f"{hb:.0f} | {hm:.0f} | {diff:.1e} |", flush=True)


if __name__ == "__main__":
    main()
