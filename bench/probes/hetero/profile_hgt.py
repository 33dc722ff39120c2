#!/usr/bin/env python3
"""Where a step of bench/hetero_sage.py's model goes on the GPU (kernels by
total device time, torch.profiler), gnnc's model then PyG's, after warm-up.

    python bench/probes/hetero/profile_hgt.py [--model hgt|sage] [--scale 1.0]
"""

import argparse
import copy
import pathlib
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
import hetero_sage  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", choices=("sage", "hgt"), default="hgt")
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--features", type=int, default=128)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--rows", type=int, default=30)
    args = p.parse_args()
    dev = torch.device("cuda")
    import gnnc.nn
    import torch_geometric.nn as pyg_nn
    data = hetero_sage.mag_like(args.scale, args.features, dev)
    torch.manual_seed(0)
    pyg = hetero_sage.build(pyg_nn, pyg_nn.to_hetero, args, data.metadata()).to(dev)
    ours = hetero_sage.build(gnnc.nn, gnnc.nn.to_hetero, args, data.metadata()).to(dev)
    with torch.no_grad():
        pyg(data.x_dict, data.edge_index_dict)
        ours(data.x_dict, data.edge_index_dict)
    ours.load_state_dict(copy.deepcopy(pyg.state_dict()))

    def step(m):
        m.zero_grad(set_to_none=True)
        out = m(data.x_dict, data.edge_index_dict)["paper"]
        F.cross_entropy(out, data["paper"].y).backward()

    for name, m in (("gnnc", ours), ("pyg", pyg)):
        for _ in range(3):
            step(m)
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                torch.profiler.ProfilerActivity.CUDA]) as prof:
            step(m)
            torch.cuda.synchronize()
        print(f"===== {name}")
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=args.rows,
                                        max_name_column_width=70))


if __name__ == "__main__":
    main()
