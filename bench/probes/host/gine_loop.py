"""GINE on QM9 batches (issue 31) as a training loop runs it: steps back to
back, synchronised only at the end of each round, so the host queues the
next step while the device runs the last one (bench/gine.py synchronises
before and after every step). Per side and batch size: us per step of
  fb     zero_grad(set_to_none) + forward + square().mean().backward()
  adam   the same + torch.optim.Adam's step (foreach, PyTorch's default)
minimum over --rounds of the mean over --steps; sides alternate each round.
    python bench/probes/host/gine_loop.py QM9_DIR [--batches 256 1024 4096]"""
import argparse, os, pathlib, sys, time
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gine as G  # noqa: E402
import molecules  # noqa: E402


def models(batch, qm9, device):
    import gnnc.nn
    import torch_geometric.nn as pyg_nn
    torch.manual_seed(0)
    pyg = G.Net(pyg_nn, 16, 64, 3, 4)
    ours = G.Net(gnnc.nn, 16, 64, 3, 4)
    ours.load_state_dict(pyg.state_dict())
    x, ei, _ = qm9.batch(0, batch, 16, device)
    ea = G.bond_features(ei.cpu(), 4, 0).to(device)
    return {"pyg": pyg.to(device), "gnnc": ours.to(device)}, (x, ei, ea)


def loop(m, batch, steps, opt):
    params = list(m.parameters())
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        for p in params:
            p.grad = None
        m(*batch).square().mean().backward()
        if opt is not None:
            opt.step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / steps * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("qm9", type=pathlib.Path)
    ap.add_argument("--batches", type=int, nargs="+", default=[256, 1024, 4096])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    device = torch.device("cuda")
    qm9 = molecules.QM9(args.qm9)
    print(f"device {torch.cuda.get_device_name(device)}")
    print("| batch | nodes | edges | kind | PyG us/step | gnnc us/step | PyG / gnnc |")
    print("| ---: | ---: | ---: | --- | ---: | ---: | ---: |")
    for b in args.batches:
        sides, batch = models(b, qm9, device)
        for kind in ("fb", "adam"):
            opts = {n: (torch.optim.Adam(m.parameters(), lr=1e-4) if kind == "adam" else None)
                    for n, m in sides.items()}
            best = {}
            for n, m in sides.items():
                loop(m, batch, 20, opts[n])  # warm-up (JIT, allocator, Adam's state)
            for _ in range(args.rounds):
                for n, m in sides.items():
                    us = loop(m, batch, args.steps, opts[n])
                    best[n] = min(best.get(n, us), us)
            print(f"| {b} | {batch[0].size(0)} | {batch[1].size(1)} | {kind} | "
                  f"{best['pyg']:.0f} | {best['gnnc']:.0f} | {best['pyg'] / best['gnnc']:.2f} |",
                  flush=True)


if __name__ == "__main__":
    main()
