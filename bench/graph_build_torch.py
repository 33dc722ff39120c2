#!/usr/bin/env python3
"""Graph build on the GPU: gnnc's runtime against the same CSR built with
PyTorch ops, on the same edges, in one run.

Runs build/bin/gnn-runtime-bench (which also measures NVRTC cache times and the
host cost of a launch), which dumps each graph's COO; then times PyTorch
building the same structures from the same int64 edge_index on the GPU:
CSR by destination (stable sort of dst * N + src), CSC by source, the
permutation between them, in- and out-degrees. Median of CUDA-event timings
after warm-up. Prints a table and writes JSON (--json).

    python3 bench/graph_build_torch.py --bench build/bin/gnn-runtime-bench \
        --json runtime.json
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

GRAPHS = {
    "arxiv-like": "powerlaw:nodes=169343,edges=2332486,seed=1",
    "reddit-like": "powerlaw:nodes=232965,edges=114615892,seed=1",
}


def torch_build(src, dst, n):
    e = src.numel()
    perm_csr = torch.sort(dst * n + src, stable=True).indices
    col = src[perm_csr]
    in_deg = torch.bincount(dst, minlength=n)
    rowptr = torch.zeros(n + 1, dtype=torch.long, device=src.device)
    rowptr[1:] = torch.cumsum(in_deg, 0)
    perm_csc = torch.sort(src * n + dst, stable=True).indices
    row = dst[perm_csc]
    out_deg = torch.bincount(src, minlength=n)
    colptr = torch.zeros(n + 1, dtype=torch.long, device=src.device)
    colptr[1:] = torch.cumsum(out_deg, 0)
    inverse = torch.empty_like(perm_csr)
    inverse[perm_csr] = torch.arange(e, device=src.device)
    csc_to_csr = inverse[perm_csc]
    return rowptr, col, perm_csr, colptr, row, perm_csc, csc_to_csr, in_deg, out_deg


def time_ms(fn, warm=2, reps=10):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(warm):
        fn()
    times = []
    for _ in range(reps):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return float(np.median(times))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bench", default="build/bin/gnn-runtime-bench")
    p.add_argument("--graphs", default=",".join(GRAPHS))
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--json", default=None)
    args = p.parse_args()
    names = args.graphs.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [args.bench, "--dump-dir", tmp, "--reps", str(args.reps)]
        for name in names:
            cmd += ["--graph", f"{name}={GRAPHS[name]}"]
        run = subprocess.run(cmd, capture_output=True, text=True)
        sys.stderr.write(run.stderr)
        if run.returncode != 0:
            raise SystemExit("gnn-runtime-bench failed")
        ours = json.loads(run.stdout)
        for g in ours["graphs"]:
            src = torch.from_numpy(np.load(os.path.join(tmp, g["name"] + ".src.npy"))).long().cuda()
            dst = torch.from_numpy(np.load(os.path.join(tmp, g["name"] + ".dst.npy"))).long().cuda()
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            g["torch_build_ms"] = time_ms(lambda: torch_build(src, dst, g["nodes"]), reps=args.reps)
            g["torch_peak_extra_mib"] = (torch.cuda.max_memory_allocated() - base) / 2**20
            g["speedup_vs_torch"] = g["torch_build_ms"] / g["build_ms_int64_input"]
            g["speedup_vs_torch_no_stats"] = g["torch_build_ms"] / g["build_ms_int64_input_no_stats"]
            del src, dst
            torch.cuda.empty_cache()
    ours["torch"] = torch.__version__
    print(f"device: {ours['device']}, torch {torch.__version__}, NVRTC {ours['nvrtc_version']}")
    print(f"{'graph':12} {'nodes':>8} {'edges':>11} {'gnnc ms':>9} {'(no stats)':>10} "
          f"{'torch ms':>9} {'speedup':>8}")
    for g in ours["graphs"]:
        print(f"{g['name']:12} {g['nodes']:8d} {g['edges']:11d} {g['build_ms_int64_input']:9.3f} "
              f"{g['build_ms_int64_input_no_stats']:10.3f} {g['torch_build_ms']:9.3f} "
              f"{g['speedup_vs_torch']:7.2f}x")
    n = ours["nvrtc"]
    print(f"NVRTC ({n['kernel_source_bytes']} B kernel): cold {n['cold_compile_ms']:.2f} ms, "
          f"disk hit {n['disk_hit_ms']:.3f} ms, memory hit {n['memory_hit_us']:.3f} us")
    l = ours["launch"]
    print(f"host per launch: {l['host_us_per_kernel_launch']:.3f} us (Kernel::launch), "
          f"{l['host_us_per_executable_run_1_launch']:.3f} us (Executable::run, 1 launch)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(ours, f, indent=2)


if __name__ == "__main__":
    main()
