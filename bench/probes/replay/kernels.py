"""The device time per kernel of a gnnc.nn layer's step (nn_layers.py's
step) on each graph: which kernel makes one graph's step slower.

    python bench/probes/replay/kernels.py --datasets DIR [--graphs ...]
        [--layers gin] [--channels 64] [--sides gnnc pyg]"""
import argparse
import collections
import os
import pathlib
import sys

os.environ.setdefault("GNNC_JIT", "sync")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
import torch  # noqa: E402
import nn_layers as B  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", required=True)
    ap.add_argument("--graphs", nargs="+", default=["pubmed", "musae-github"])
    ap.add_argument("--layers", nargs="+", default=["gin"])
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--sides", nargs="+", default=["gnnc"])
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    dev = torch.device("cuda")
    c = args.channels
    for g in args.graphs:
        ei, n = B.load_graph(pathlib.Path(args.datasets) / g, dev)
        deg = torch.bincount(ei[1], minlength=n)
        print(f"== {g}: {n} nodes, {ei.shape[1]} edges, max in-degree {int(deg.max())}",
              flush=True)
        gen = torch.Generator(device=dev).manual_seed(1)
        x = torch.randn(n, c, device=dev, generator=gen)
        dy = torch.randn(n, c, device=dev, generator=gen)
        for name in args.layers:
            ours, pyg = B.pair(name, c, dev)
            for side in args.sides:
                layer = ours if side == "gnnc" else pyg
                xx = x.clone().requires_grad_()

                def step():
                    layer(xx, ei).mul(dy).sum().backward()
                ms = B.median_ms(step, 20, 20)
                with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                    for _ in range(args.steps):
                        step()
                    torch.cuda.synchronize()
                us, count = collections.Counter(), collections.Counter()
                for ev in prof.events():
                    if ev.device_type == torch.autograd.DeviceType.CUDA:
                        us[ev.name] += ev.device_time_total
                        count[ev.name] += 1
                total = sum(us.values()) / args.steps
                print(f"{g} {name} {side}: step {ms:.3f} ms, device {total:.1f} us per step",
                      flush=True)
                for k, v in us.most_common(12):
                    print(f"   {v / args.steps:9.1f} us  x{count[k] / args.steps:.0f}  {k[:150]}")


if __name__ == "__main__":
    main()
