"""The device time per kernel of a gnnc.nn layer's step (nn_layers.py's
step) on each graph: which kernel makes one graph's step slower.

    python bench/probes/replay/kernels.py --datasets DIR [--graphs ...]
        [--layers gin] [--channels 64] [--sides gnnc pyg]"""
import collections

from _setup import B, arguments, cases, stepper, torch


def main():
    args = arguments(__doc__, ["pubmed", "musae-github"], ["gin"], sides=["gnnc"],
                     steps=20)

    def log(g, n, ei):
        deg = torch.bincount(ei[1], minlength=n)
        print(f"== {g}: {n} nodes, {ei.shape[1]} edges, max in-degree {int(deg.max())}",
              flush=True)
    for g, name, ei, x, dy, ours, pyg in cases(args, log):
        for side in args.sides:
            step = stepper(ours if side == "gnnc" else pyg, x, ei, dy)
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
