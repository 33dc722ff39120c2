"""Why a gnnc.nn layer's step on one graph costs more host time than on a
larger one (issue 28: GIN on pubmed): per step, the CUDA runtime calls
(kernel launches, graph launches, captures, instantiations, allocations,
synchronisations) that torch.profiler sees, the distinct addresses of the
layer's output over the steps, and the median step time (nn_layers.py's
step: out = layer(x, edge_index); (out * dy).sum().backward()).

    python bench/probes/replay/counts.py --datasets DIR [--graphs ...]
        [--layers gcn gin] [--channels 64]"""
import argparse
import collections
import os
import pathlib
import sys

os.environ.setdefault("GNNC_JIT", "sync")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
import torch  # noqa: E402
import nn_layers as B  # noqa: E402

WATCH = ("cudaLaunchKernel", "cudaGraphLaunch", "cudaStreamBeginCapture",
         "cudaGraphInstantiate", "cudaMalloc", "cudaFree", "cudaStreamSynchronize",
         "cudaDeviceSynchronize", "cudaMemcpyAsync", "cudaMemsetAsync",
         "cudaLaunchKernelExC", "cuLaunchKernel", "cudaEventRecord")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", required=True)
    ap.add_argument("--graphs", nargs="+", default=["pubmed", "musae-github", "blogcatalog"])
    ap.add_argument("--layers", nargs="+", default=["gcn", "gin"])
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--steps", type=int, default=20)
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
            for side, layer in (("gnnc", ours), ("pyg", pyg)):
                xx = x.clone().requires_grad_()
                ptrs = []

                def step():
                    out = layer(xx, ei)
                    ptrs.append(out.data_ptr())
                    out.mul(dy).sum().backward()
                ms = B.median_ms(step, 30, 30)
                ptrs.clear()
                with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                        torch.profiler.ProfilerActivity.CUDA]) as prof:
                    for _ in range(args.steps):
                        step()
                    torch.cuda.synchronize()
                counts = collections.Counter()
                for ev in prof.events():
                    for w in WATCH:
                        if ev.name == w:
                            counts[w] += 1
                per = {k: round(v / args.steps, 2) for k, v in sorted(counts.items())}
                kernels = sum(1 for ev in prof.events()
                              if ev.device_type == torch.autograd.DeviceType.CUDA)
                print(f"{g} {name} {side}: step {ms:.3f} ms; per step {per}; "
                      f"device events {kernels / args.steps:.1f}; "
                      f"distinct output addresses {len(set(ptrs))} of {len(ptrs)}", flush=True)


if __name__ == "__main__":
    main()
