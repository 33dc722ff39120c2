"""Why a gnnc.nn layer's step on one graph costs more host time than on a
larger one (issue 28: GIN on pubmed): per step, the CUDA runtime calls
(kernel launches, graph launches, captures, instantiations, allocations,
synchronisations) that torch.profiler sees, the distinct addresses of the
layer's output over the steps, and the median step time (nn_layers.py's
step: out = layer(x, edge_index); (out * dy).sum().backward()).

    python bench/probes/replay/counts.py --datasets DIR [--graphs ...]
        [--layers gcn gin] [--channels 64]"""
import collections

from _setup import B, arguments, cases, stepper, torch

WATCH = ("cudaLaunchKernel", "cudaGraphLaunch", "cudaStreamBeginCapture",
         "cudaGraphInstantiate", "cudaMalloc", "cudaFree", "cudaStreamSynchronize",
         "cudaDeviceSynchronize", "cudaMemcpyAsync", "cudaMemsetAsync",
         "cudaLaunchKernelExC", "cuLaunchKernel", "cudaEventRecord")


def main():
    args = arguments(__doc__, ["pubmed", "musae-github", "blogcatalog"], ["gcn", "gin"],
                     steps=20)
    for g, name, ei, x, dy, ours, pyg in cases(args):
        for side, layer in (("gnnc", ours), ("pyg", pyg)):
            ptrs = []
            step = stepper(layer, x, ei, dy, lambda out: ptrs.append(out.data_ptr()))
            ms = B.median_ms(step, 30, 30)
            ptrs.clear()
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                    torch.profiler.ProfilerActivity.CUDA]) as prof:
                for _ in range(args.steps):
                    step()
                torch.cuda.synchronize()
            counts = collections.Counter(ev.name for ev in prof.events() if ev.name in WATCH)
            per = {k: round(v / args.steps, 2) for k, v in sorted(counts.items())}
            kernels = sum(1 for ev in prof.events()
                          if ev.device_type == torch.autograd.DeviceType.CUDA)
            print(f"{g} {name} {side}: step {ms:.3f} ms; per step {per}; "
                  f"device events {kernels / args.steps:.1f}; "
                  f"distinct output addresses {len(set(ptrs))} of {len(ptrs)}", flush=True)


if __name__ == "__main__":
    main()
