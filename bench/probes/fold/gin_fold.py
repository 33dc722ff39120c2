"""Does folding GIN's / GINE's leading Linear(+ReLU) maps into the gnn
function pay on real graphs (issue 28 item 5, issue 31's GINE point)? The
forward+backward of PyG's layer, gnnc's as it is (the `nn` prefix folded,
conv._gin_run) and gnnc's with the fold switched off (conv._leading_mlp
returning no prefix: `nn` runs in PyTorch after the aggregation), rounds
interleaved in one process, the minimum of the medians kept (CUDA events,
ms). Cases: GINConv(Linear(C, C)) as bench/nn_layers.py builds it, GINConv
with a 2-layer MLP, on each graph and width; and bench/gine.py's 3-layer
GINE model on a QM9 batch.

    python bench/probes/fold/gin_fold.py --datasets DIR [--graphs ...]
        [--channels 64 128] [--qm9 DIR] [--reps 30]"""
import argparse, json, math, os, pathlib, sys
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
import nn_layers  # noqa: E402
import gnnc.nn  # noqa: E402
from gnnc.nn import conv  # noqa: E402
import torch_geometric.nn as pygnn  # noqa: E402

FOLD = conv._leading_mlp


def nofold(nn, x):
    return None, None, None


def variants():
    return (("pyg", None), ("gnnc", FOLD), ("gnnc_nofold", nofold))


def run(step_of, label, reps, warmup, rounds=3):
    best = {}
    for _ in range(rounds):
        for name, fold in variants():
            conv._leading_mlp = fold or FOLD
            ms = nn_layers.median_ms(step_of(name), reps, warmup)
            best[name] = min(best.get(name, math.inf), ms)
    conv._leading_mlp = FOLD
    r = dict(case=label, **{k: round(v, 4) for k, v in best.items()},
             fold_speedup=best["gnnc_nofold"] / best["gnnc"],
             pyg_over_gnnc=best["pyg"] / best["gnnc"],
             pyg_over_nofold=best["pyg"] / best["gnnc_nofold"])
    print(json.dumps(r), flush=True)
    return r


def gin_models(c, mlp, dev):
    def nn():
        return (torch.nn.Sequential(torch.nn.Linear(c, c), torch.nn.ReLU(),
                                    torch.nn.Linear(c, c)) if mlp else torch.nn.Linear(c, c))
    torch.manual_seed(0)
    pyg = pygnn.GINConv(nn(), train_eps=True).to(dev)
    ours = gnnc.nn.GINConv(nn(), train_eps=True).to(dev)
    ours.load_state_dict(pyg.state_dict())
    return {"pyg": pyg, "gnnc": ours, "gnnc_nofold": ours}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", required=True)
    ap.add_argument("--graphs", nargs="+", default=["pubmed", "musae-github", "blogcatalog"])
    ap.add_argument("--channels", nargs="+", type=int, default=[64, 128])
    ap.add_argument("--qm9", default=None)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    args = ap.parse_args()
    dev = torch.device("cuda")
    rows = []
    for g in args.graphs:
        ei, n = nn_layers.load_graph(pathlib.Path(args.datasets) / g, dev)
        for c in args.channels:
            x = torch.randn(n, c, device=dev).requires_grad_()
            dy = torch.randn(n, c, device=dev)
            for mlp in (False, True):
                m = gin_models(c, mlp, dev)
                # Outputs agree across the three.
                outs = {}
                for name, fold in variants():
                    conv._leading_mlp = fold or FOLD
                    outs[name] = m[name](x, ei).detach()
                conv._leading_mlp = FOLD
                diff = max(float((outs[k] - outs["pyg"]).abs().max()) for k in outs)

                def step_of(name, m=m, x=x):
                    def f():
                        m[name](x, ei).mul(dy).sum().backward()
                    return f
                r = run(step_of, f"{g} C={c} gin{'_mlp' if mlp else ''}", args.reps,
                        args.warmup)
                r["max_abs_diff"] = diff
                rows.append(r)
    if args.qm9:
        import gine as G
        import molecules
        torch.manual_seed(0)
        pyg = G.Net(pygnn, 16, 64, 3, 4)
        ours = G.Net(gnnc.nn, 16, 64, 3, 4)
        ours.load_state_dict(pyg.state_dict())
        pyg, ours = pyg.to(dev), ours.to(dev)
        for batch in (1024, 4096):
            x, ei, _ = molecules.QM9(pathlib.Path(args.qm9)).batch(0, batch, 16, dev)
            ea = G.bond_features(ei.cpu(), 4, 0).to(dev)
            m = {"pyg": pyg, "gnnc": ours, "gnnc_nofold": ours}

            def step_of(name, m=m, x=x, ei=ei, ea=ea):
                ps = list(m[name].parameters())

                def f():
                    for p in ps:
                        p.grad = None
                    m[name](x, ei, ea).square().mean().backward()
                return f
            rows.append(run(step_of, f"qm9 batch {batch} gine model", args.reps * 2,
                            args.warmup))
    print("\n| case | PyG ms | gnnc (fold) ms | gnnc no fold ms | PyG/fold | PyG/nofold |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['case']} | {r['pyg']:.3f} | {r['gnnc']:.3f} | {r['gnnc_nofold']:.3f} "
              f"| {r['pyg_over_gnnc']:.2f} | {r['pyg_over_nofold']:.2f} |")


if __name__ == "__main__":
    main()
