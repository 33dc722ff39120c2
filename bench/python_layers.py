#!/usr/bin/env python3
"""Layer-level forward+backward: gnnc.nn against PyG and turbo-gnn.

GATv2Conv and TransformerConv (128 -> 4 heads x 32, no self-loops) on a
synthetic arxiv-like graph (the scoreboard's generator: 169,343 nodes,
2,332,486 edges, power-law endpoints), all on one GPU in one process:

* gnnc: ``gnnc.nn.GATv2Conv`` / ``TransformerConv`` (weights loaded from the
  PyG layer, outputs checked against it);
* pyg: ``torch_geometric.nn`` with the same weights;
* turbo-gnn: the same projections in torch, the aggregation by turbo-gnn's
  functional ops (``gatv2_aggr``, ``graph_transformer_aggr``), when
  ``turbo_gnn`` imports.

Each step is forward, then backward of ``(out * dy).sum()`` into the input and
every parameter; the figure is the median of CUDA-event timings after
warm-up. Peak memory is ``torch.cuda.max_memory_allocated`` above the inputs
during one step (gnnc's graph structures live outside PyTorch's allocator and
are reported separately as ``graph_bytes`` where known).

    python bench/python_layers.py --peers ../shared/bench/peers [--reps 20]

Prints one JSON line per measurement and a table of ratios.
"""

import argparse
import json
import statistics
import sys

import torch


def time_step(step, reps, warmup):
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    step()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    return statistics.median(times), peak


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peers", required=True, help="the scoreboard folder (graphs.py)")
    ap.add_argument("--graph", default="arxiv-like")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--layers", default="gatv2,transformer")
    args = ap.parse_args()
    sys.path.insert(0, args.peers)
    import graphs
    import gnnc.nn
    import torch_geometric.nn as pyg

    try:
        import turbo_gnn as tg
    except Exception as exc:  # noqa: BLE001 - report and go on without it
        tg = None
        print(json.dumps({"note": f"turbo_gnn not importable: {exc!r}"[:300]}))

    dev = torch.device("cuda")
    n, e, alpha = graphs.SYNTHETIC[args.graph]
    ei = graphs.powerlaw_graph(n, e, alpha, seed=0, device=dev)
    n_edges = ei.shape[1]
    fin, heads, d = 128, 4, 32
    torch.manual_seed(0)
    x = torch.randn(n, fin, device=dev, requires_grad=True)
    tgraph = None
    if tg is not None:
        tgraph = tg.AdjacencyForwardBackwardWithNodeBuckets.from_edge_list(
            ei, num_nodes=n, index_dtype=torch.int32).to(dev)
    print(json.dumps({"graph": args.graph, "nodes": n, "edges": n_edges,
                      "gpu": torch.cuda.get_device_name()}), flush=True)

    rows = []
    for layer in args.layers.split(","):
        if layer == "gatv2":
            ref = pyg.GATv2Conv(fin, d, heads=heads, add_self_loops=False).to(dev)
            mine = gnnc.nn.GATv2Conv(fin, d, heads=heads, add_self_loops=False).to(dev)
        else:
            ref = pyg.TransformerConv(fin, d, heads=heads).to(dev)
            mine = gnnc.nn.TransformerConv(fin, d, heads=heads).to(dev)
        mine.load_state_dict(ref.state_dict())
        with torch.no_grad():
            want = ref(x, ei)
            got = mine(x, ei)
        err = ((got - want).abs() / (1 + want.abs())).max().item()
        dy = torch.randn_like(want)

        def stepper(fn, params):
            def step():
                for p in params:
                    p.grad = None
                x.grad = None
                (fn() * dy).sum().backward()
            return step

        impls = {
            "gnnc": stepper(lambda: mine(x, ei), list(mine.parameters())),
            "pyg": stepper(lambda: ref(x, ei), list(ref.parameters())),
        }
        if tg is not None and layer == "gatv2":
            def turbo():
                xl = ref.lin_l(x).view(n, heads, d)
                xr = ref.lin_r(x).view(n, heads, d)
                out = tg.gatv2_aggr(tgraph, xr, x_neighbors=xl,
                                    attention_weights=ref.att.view(heads, d),
                                    negative_slope=ref.negative_slope)
                return out.reshape(n, heads * d) + ref.bias
            impls["turbo-gnn"] = stepper(turbo, list(ref.parameters()))
        if tg is not None and layer == "transformer":
            scale = 1.0 / d ** 0.5

            def turbo():
                q = ref.lin_query(x).view(n, heads, d)
                k = ref.lin_key(x).view(n, heads, d)
                v = ref.lin_value(x).view(n, heads, d)
                # turbo-gnn's Q is the source side and K the target side (as
                # the scoreboard's ops_bench.py calls it).
                out = tg.graph_transformer_aggr(tgraph, q.reshape(n, heads * d),
                                                Q=k, K=q, V=v, scale=scale)
                return out.reshape(n, heads * d) + ref.lin_skip(x)
            impls["turbo-gnn"] = stepper(turbo, list(ref.parameters()))
        for impl, step in impls.items():
            try:
                ms, peak = time_step(step, args.reps, args.warmup)
                rec = {"layer": layer, "impl": impl, "fwdbwd_ms": ms, "peak_bytes": peak}
            except Exception as exc:  # noqa: BLE001 - a peer may not support it
                rec = {"layer": layer, "impl": impl, "error": repr(exc)[:300]}
            if impl == "gnnc":
                rec["max_rel_error_vs_pyg"] = err
            print(json.dumps(rec), flush=True)
            rows.append(rec)
    print("\n| layer | impl | fwd+bwd ms | peak MiB | pyg / impl | turbo-gnn / impl |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        if "fwdbwd_ms" not in r:
            print(f"| {r['layer']} | {r['impl']} | error | | | |")
            continue
        same = {q["impl"]: q for q in rows if q["layer"] == r["layer"] and "fwdbwd_ms" in q}
        ratio = lambda k: f"{same[k]['fwdbwd_ms'] / r['fwdbwd_ms']:.2f}" if k in same else "-"
        print(f"| {r['layer']} | {r['impl']} | {r['fwdbwd_ms']:.2f} | "
              f"{r['peak_bytes'] / 2**20:.0f} | {ratio('pyg')} | {ratio('turbo-gnn')} |")


if __name__ == "__main__":
    main()
