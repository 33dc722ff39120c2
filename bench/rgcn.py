#!/usr/bin/env python3
"""RGCNConv with many relations (issue 31: forward+backward >= 5x PyG's with
90 and 1,000 relations on a 1M-edge graph, memory <= PyG's, no graph break
under torch.compile(fullgraph=True)): PyG's layer against gnnc.nn's, one
run, the same weights.

Graph: N nodes, E edges with uniformly random ends, relation ids drawn with
Zipf-like frequencies (relation r with weight 1 / (r + 1), as real knowledge
graphs have few frequent relations and many rare ones), seeded. One layer
``RGCNConv(C, C, R)`` (``--bases B``: basis decomposition), mean
aggregation, float32.

Per side and relation count: forward under ``torch.no_grad()`` and
forward+backward (``out.square().mean().backward()``), median wall time per
iteration with a synchronisation before and after each, ``--rounds`` rounds
alternating the sides (the minimum of the medians kept); the peak memory of
one forward+backward step above what was allocated before it, first call
(gnnc builds and caches its per-graph structures there) and steady state;
outputs and gradients compared (max |diff|); gnnc's graph breaks under
``torch._dynamo.explain``.

    python bench/rgcn.py [--nodes 100000] [--edges 1000000] [--relations 90 1000]
    python bench/rgcn.py --device cpu --nodes 500 --edges 3000 --relations 7 \\
        --iters 2 --warmup 1 --rounds 1          # smoke test

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
import molecules  # noqa: E402  (the timing helpers)


def relational_graph(nodes, edges, relations, seed, device):
    g = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(0, nodes, (2, edges), generator=g)
    weights = 1.0 / torch.arange(1, relations + 1, dtype=torch.float64)
    edge_type = torch.multinomial(weights, edges, replacement=True, generator=g)
    return edge_index.to(device), edge_type.to(device)


def peak_mb(step, device):
    """Peak memory of one call of `step` above what was allocated before it."""
    if device.type != "cuda":
        step()
        return float("nan")
    molecules.sync(device)
    torch.cuda.reset_peak_memory_stats(device)
    base = torch.cuda.memory_allocated(device)
    step()
    molecules.sync(device)
    return (torch.cuda.max_memory_allocated(device) - base) / 2**20


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--edges", type=int, default=1_000_000)
    ap.add_argument("--relations", type=int, nargs="+", default=[90, 1000])
    ap.add_argument("--channels", type=int, default=16)
    ap.add_argument("--bases", type=int, default=None)
    molecules.timing_arguments(ap, iters=10, warmup=2)
    args = ap.parse_args(argv)
    device = torch.device(args.device)

    import gnnc.nn
    import torch_geometric.nn as pyg_nn
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(f"device {name}; {args.nodes} nodes, {args.edges} edges, {args.channels} "
          f"channels, bases {args.bases}, mean")
    print("| relations | step | PyG ms | gnnc ms | PyG / gnnc | PyG peak MB (first, "
          "steady) | gnnc peak MB (first, steady) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    rows = []
    for relations in args.relations:
        torch.manual_seed(args.seed)
        c = args.channels
        pyg = pyg_nn.RGCNConv(c, c, relations, num_bases=args.bases)
        ours = gnnc.nn.RGCNConv(c, c, relations, num_bases=args.bases)
        ours.load_state_dict(pyg.state_dict())
        sides = {"pyg": pyg.to(device), "gnnc": ours.to(device)}
        edge_index, edge_type = relational_graph(args.nodes, args.edges, relations,
                                                 args.seed, device)
        x = torch.randn(args.nodes, c, generator=torch.Generator().manual_seed(1)).to(device)
        x.requires_grad_()
        batch = (x, edge_index, edge_type)

        def train(m):
            params = list(m.parameters())

            def f(*b):
                for p in params:
                    p.grad = None
                b[0].grad = None
                m(*b).square().mean().backward()
            return f

        def forward(m):
            def f(*b):
                with torch.no_grad():
                    m(*b)
            return f

        memory = {k: [peak_mb(lambda: train(m)(*batch), device)] for k, m in sides.items()}
        for k, m in sides.items():
            memory[k].append(peak_mb(lambda: train(m)(*batch), device))
        results = {}
        for kind, make in (("forward", forward), ("forward_backward", train)):
            best = {}
            for _ in range(args.rounds):
                for k, m in sides.items():
                    ms = molecules.median_ms(make(m), [batch], args.iters, args.warmup,
                                             device)
                    best[k] = min(best.get(k, ms), ms)
            results[kind] = best
        outs, grads = {}, {}
        for k, m in sides.items():
            m.zero_grad(set_to_none=True)
            x.grad = None
            y = m(*batch)
            y.square().mean().backward()
            outs[k] = y.detach()
            grads[k] = [x.grad.clone()] + [p.grad for p in m.parameters()]
        diff_out = float((outs["gnnc"] - outs["pyg"]).abs().max())
        diff_grad = max(float((a - b).abs().max()) for a, b in zip(grads["gnnc"],
                                                                   grads["pyg"]))
        explanation = torch._dynamo.explain(lambda *b: ours(*b))(*batch)
        torch._dynamo.reset()
        for kind, r in results.items():
            mp, mg = memory["pyg"], memory["gnnc"]
            mem = (f"{mp[0]:.0f}, {mp[1]:.0f} | {mg[0]:.0f}, {mg[1]:.0f}"
                   if kind == "forward_backward" else " | ")
            print(f"| {relations} | {kind} | {r['pyg']:.3f} | {r['gnnc']:.3f} | "
                  f"{r['pyg'] / r['gnnc']:.2f} | {mem} |")
        print(f"relations {relations}: max |diff| out {diff_out:.2e}, gradients "
              f"{diff_grad:.2e}; gnnc graph breaks {explanation.graph_break_count}")
        rows.append(dict(relations=relations, results=results, peak_mb=memory,
                         max_abs_diff_out=diff_out, max_abs_diff_grad=diff_grad,
                         gnnc_graph_breaks=explanation.graph_break_count))
        sides = pyg = ours = batch = x = edge_index = edge_type = outs = grads = None
        if device.type == "cuda":
            torch.cuda.empty_cache()
    if args.out:
        args.out.write_text(json.dumps(dict(vars(args), out=str(args.out), device_name=name,
                                            rows=rows), indent=1))


if __name__ == "__main__":
    main()
