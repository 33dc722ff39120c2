"""How much a layer's step time (nn_layers.py's step) moves between rounds
in one process: per graph and layer, `--rounds` rounds alternating gnnc and
PyG, each the median, 10th and 90th percentile of `--reps` CUDA-event-timed
steps.

    python bench/probes/replay/rounds.py --datasets DIR [--graphs ...]
        [--layers gin gcn] [--rounds 6]"""
import statistics

from _setup import B, arguments, cases, stepper


def main():
    args = arguments(__doc__, ["pubmed", "musae-github"], ["gin", "gcn"], rounds=6, reps=40)
    for g, name, ei, x, dy, ours, pyg in cases(args):
        rows = {"gnnc": [], "pyg": []}
        for _ in range(args.rounds):
            for side, layer in (("gnnc", ours), ("pyg", pyg)):
                t = B.step_times(stepper(layer, x, ei, dy), args.reps, 10)
                k = len(t)
                rows[side].append((statistics.median(t), t[k // 10], t[(9 * k) // 10]))
        for side, r in rows.items():
            cells = " ".join(f"{m:.3f}[{lo:.3f},{hi:.3f}]" for m, lo, hi in r)
            print(f"{g} {name} {side}: {cells}", flush=True)
        best = {s: min(m for m, _, _ in r) for s, r in rows.items()}
        print(f"{g} {name}: best-median ratio {best['pyg'] / best['gnnc']:.2f}", flush=True)


if __name__ == "__main__":
    main()
