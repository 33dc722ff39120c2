"""How much a layer's step time (nn_layers.py's step) moves between rounds
in one process: per graph and layer, `--rounds` rounds alternating gnnc and
PyG, each the median, 10th and 90th percentile of `--reps` CUDA-event-timed
steps.

    python bench/probes/replay/rounds.py --datasets DIR [--graphs ...]
        [--layers gin gcn] [--rounds 6]"""
import argparse
import os
import pathlib
import statistics
import sys

os.environ.setdefault("GNNC_JIT", "sync")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
import torch  # noqa: E402
import nn_layers as B  # noqa: E402


def times(step, reps, warmup):
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b))
    out.sort()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", required=True)
    ap.add_argument("--graphs", nargs="+", default=["pubmed", "musae-github"])
    ap.add_argument("--layers", nargs="+", default=["gin", "gcn"])
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--reps", type=int, default=40)
    args = ap.parse_args()
    dev = torch.device("cuda")
    c = args.channels
    for g in args.graphs:
        ei, n = B.load_graph(pathlib.Path(args.datasets) / g, dev)
        gen = torch.Generator(device=dev).manual_seed(1)
        x = torch.randn(n, c, device=dev, generator=gen)
        dy = torch.randn(n, c, device=dev, generator=gen)
        for name in args.layers:
            ours, pyg = B.pair(name, c, dev)
            rows = {"gnnc": [], "pyg": []}
            for _ in range(args.rounds):
                for side, layer in (("gnnc", ours), ("pyg", pyg)):
                    xx = x.clone().requires_grad_()

                    def step():
                        layer(xx, ei).mul(dy).sum().backward()
                    t = times(step, args.reps, 10)
                    k = len(t)
                    rows[side].append((statistics.median(t), t[k // 10], t[(9 * k) // 10]))
            for side, r in rows.items():
                cells = " ".join(f"{m:.3f}[{lo:.3f},{hi:.3f}]" for m, lo, hi in r)
                print(f"{g} {name} {side}: {cells}", flush=True)
            best = {s: min(m for m, _, _ in r) for s, r in rows.items()}
            print(f"{g} {name}: best-median ratio {best['pyg'] / best['gnnc']:.2f}", flush=True)


if __name__ == "__main__":
    main()
