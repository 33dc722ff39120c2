#!/usr/bin/env python3
"""Where a training epoch's time goes: gnnc.nn against PyG on Cora (GCN or
GAT, PyG's example models from examples/python/train_cora.py), on the GPU.

Prints the median epoch time (forward, backward, optimiser step) and the
forward alone, for both, then the Python functions that take the most host
time during 50 gnnc epochs (cProfile). Host time per layer call is what
bounds an epoch on a small graph like Cora.

    python bench/profile_epoch.py [--model gcn|gat]
"""

import argparse
import cProfile
import pathlib
import pstats
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples" / "python"))
import train_cora  # noqa: E402


def epoch_times(model, data, opt, reps=100):
    x, ei, y, masks, _ = data
    out = []
    fwd = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        opt.zero_grad()
        o = model(x, ei)
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        F.cross_entropy(o[masks["train"]], y[masks["train"]]).backward()
        opt.step()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t0) * 1e3)
        fwd.append((t1 - t0) * 1e3)
    return statistics.median(out[10:]), statistics.median(fwd[10:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gcn", choices=["gcn", "gat"])
    args = ap.parse_args()
    dev = torch.device("cuda")
    data = train_cora.load_planetoid(train_cora.find_dataset("cora"), dev)
    import gnnc.nn
    import torch_geometric.nn as pyg
    cls = train_cora.SETTINGS[args.model][0]
    models = {}
    for name, nn in (("gnnc", gnnc.nn), ("pyg", pyg)):
        torch.manual_seed(0)
        m = cls(nn, data[0].shape[1], data[4]).to(dev).train()
        opt = torch.optim.Adam(m.parameters(), lr=0.01)
        ep, fw = epoch_times(m, data, opt)
        print(f"{name}: epoch {ep:.3f} ms, forward {fw:.3f} ms")
        models[name] = (m, opt)
    m, opt = models["gnnc"]
    x, ei, y, masks, _ = data

    def run():
        for _ in range(50):
            opt.zero_grad()
            F.cross_entropy(m(x, ei)[masks["train"]], y[masks["train"]]).backward()
            opt.step()
        torch.cuda.synchronize()

    prof = cProfile.Profile()
    prof.runcall(run)
    st = pstats.Stats(prof)
    st.sort_stats("tottime").print_stats(25)
    st.sort_stats("cumtime").print_stats(25)


if __name__ == "__main__":
    main()
