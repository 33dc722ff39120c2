"""A deep model of one layer configuration: L layers of one gnnc.nn layer
(64 channels, ReLU between) on one graph, forward+backward per step
(Adam-free: out.square().mean().backward()), and how many of gnnc's runs
were replayed CUDA graphs. Each layer's run is a key of its own in the
layer's Executable (docs/Runtime.md, "Repeated runs as CUDA graphs"); with
more layers in turn than an Executable keeps graphs for, it ran every step
step by step. PyG's same model beside it. The launch counts are
torch.profiler's CUDA runtime calls over 3 steps after the timed ones.

    python bench/probes/replay/deep.py --datasets DIR [--graph pubmed]
        [--layers gcn gin] [--depths 2 16 24 48] [--reps 30]"""
import argparse
import os
import pathlib
import sys

os.environ.setdefault("GNNC_JIT", "sync")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
import torch  # noqa: E402
import nn_layers as B  # noqa: E402


class Deep(torch.nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = torch.nn.ModuleList(layers)

    def forward(self, x, ei):
        *hidden, last = self.layers
        for layer in hidden:
            x = torch.relu(layer(x, ei))
        return last(x, ei)


def cpu_times(step, reps):
    import time
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        step()
        out.append((time.perf_counter() - t) * 1e3)
    return sorted(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", required=True)
    ap.add_argument("--graph", default="pubmed")
    ap.add_argument("--layers", nargs="+", default=["gcn", "gin"])
    ap.add_argument("--depths", type=int, nargs="+", default=[2, 16, 24, 48])
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--sides", nargs="+", default=["gnnc", "pyg"])
    ap.add_argument("--device", default="cuda", help="cpu: a smoke test (wall-clock times)")
    args = ap.parse_args()
    dev = torch.device(args.device)
    ei, n = B.load_graph(pathlib.Path(args.datasets) / args.graph, dev)
    gen = torch.Generator(device=dev).manual_seed(1)
    x = torch.randn(n, args.channels, device=dev, generator=gen)
    print(f"{torch.cuda.get_device_name(dev) if dev.type == 'cuda' else 'cpu'}; {args.graph}: {n} nodes, "
          f"{ei.size(1)} edges; {args.channels} channels")
    print("| layer | depth | side | step ms (median) | ms per layer | cudaGraphLaunch / cudaLaunchKernel per step |")
    print("| --- | ---: | --- | ---: | ---: | --- |")
    for name in args.layers:
        for depth in args.depths:
            pairs = [B.pair(name, args.channels, dev) for _ in range(depth)]
            models = {"gnnc": Deep([p[0] for p in pairs]).to(dev),
                      "pyg": Deep([p[1] for p in pairs]).to(dev)}
            for side in args.sides:
                m = models[side]
                params = list(m.parameters())

                def step():
                    for p in params:
                        p.grad = None
                    m(x, ei).square().mean().backward()

                times = B.step_times(step, args.reps, 5) if dev.type == "cuda" else cpu_times(step, args.reps)
                med = times[len(times) // 2]
                with torch.profiler.profile(
                        activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
                    for _ in range(3):
                        step()
                    if dev.type == "cuda":
                        torch.cuda.synchronize()
                names = [ev.name for ev in prof.events()]
                counts = (f"{names.count('cudaGraphLaunch') / 3:.1f} / "
                          f"{names.count('cudaLaunchKernel') / 3:.1f}")
                print(f"| {name} | {depth} | {side} | {med:.3f} | {med / depth:.4f} | {counts} |",
                      flush=True)


if __name__ == "__main__":
    main()
