#!/usr/bin/env python3
"""Forward time and memory: gnnc's generated code against PyTorch Geometric,
and gnnc's aggregation kernels against cuSPARSE (torch.sparse), in one run on
the same graphs, shapes and weights.

For each graph and example layer, `gnn-run --backend=cuda` compiles the layer,
runs it (median of CUDA-event timings after warm-up, every step timed too)
and dumps its inputs; the matching PyG layer gets the same inputs and weights
and is timed the same way on the same GPU. For GCN and SAGE-mean, the spmm
kernel group (aggregation plus its fused epilogue) is compared with a plain
cuSPARSE CSR SpMM of the same width through torch.sparse.mm.

Memory: "extra" is what the forward needs beyond its inputs and weights
(intermediates and output): for PyG the peak of torch's allocator during the
forward minus what was allocated before; for gnnc the bytes of the Program's
output buffers and of the workspace its temporaries share (cuda.memory).

    python3 bench/compare_pyg.py --gnn-run build/bin/gnn-run --datasets DIR \
        --json compare.json
"""

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "PyG"))
from check_pyg_parity import LAYERS, t  # noqa: E402

GRAPHS = ["cora", "pubmed", "musae-github", "blogcatalog", "qm9",
          "arxiv-like=powerlaw:nodes=169343,edges=2332486,seed=1"]


def load_edges(spec, datasets):
    if "=" in spec:
        name, gen = spec.split("=", 1)
        return name, gen, None
    folder = os.path.join(datasets, spec)
    with gzip.open(os.path.join(folder, "edges.txt.gz"), "rt") as f:
        e = np.loadtxt(f, dtype=np.int64).reshape(-1, 2)
    return spec, folder, torch.from_numpy(e.T.copy())


def time_ms(fn, warm=5, reps=20):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(warm):
        fn()
    out = []
    for _ in range(reps):
        s.record()
        fn()
        e.record()
        e.synchronize()
        out.append(s.elapsed_time(e))
    return float(np.median(out))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gnn-run", default=os.path.join(ROOT, "build/bin/gnn-run"))
    p.add_argument("--datasets", default=os.environ.get("GNNC_DATASETS", ""))
    p.add_argument("--graphs", default=";".join(GRAPHS),
                   help="graphs separated by ';' (generator specs contain commas)")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--json", default=None)
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    rows = []
    for spec in args.graphs.split(";"):
        name, graph_arg, edge_index = load_edges(spec, args.datasets)
        for layer, pyg_name, make in LAYERS:
            with tempfile.TemporaryDirectory() as tmp:
                cmd = [args.gnn_run, os.path.join(ROOT, "examples", layer + ".mlir"),
                       "--graph=" + graph_arg, "--backend=cuda", "--no-check",
                       f"--reps={args.reps}", "--profile-steps",
                       "--dump-inputs=" + tmp]
                if edge_index is None:
                    cmd.append("--dump-graph=" + os.path.join(tmp, "edges.npy"))
                run = subprocess.run(cmd, capture_output=True, text=True)
                if run.returncode != 0:
                    print(run.stderr, file=sys.stderr)
                    raise SystemExit(f"gnn-run failed on {layer}/{name}")
                res = json.loads(run.stdout)
                inputs = {int(f[3:-4]): np.load(os.path.join(tmp, f))
                          for f in os.listdir(tmp) if f.startswith("arg")}
                if edge_index is None:
                    edge_index = torch.from_numpy(np.load(os.path.join(tmp, "edges.npy")))
            cuda = res["cuda"]
            ei = edge_index.cuda()
            n, e = res["graph"]["nodes"], res["graph"]["edges"]
            conv, x = make(inputs)
            conv = conv.cuda().eval()
            xg = t(x).cuda()
            with torch.no_grad():
                pyg_ms = time_ms(lambda: conv(xg, ei), reps=args.reps)
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
                before = torch.cuda.memory_allocated()
                out = conv(xg, ei)
                torch.cuda.synchronize()
                pyg_extra = torch.cuda.max_memory_allocated() - before
                del out
            input_bytes = sum(a.size * 4 for a in inputs.values())
            memory = cuda.get("memory")
            if memory:  # the outputs and the planned workspace of temporaries
                gnnc_extra = memory["output_bytes"] + memory["arena_bytes"]
            else:  # gnn-run before memory planning: one buffer per temporary
                gnnc_extra = cuda["program_bytes"] - input_bytes
            row = dict(graph=name, nodes=n, edges=e, layer=layer, pyg_layer=pyg_name,
                       gnnc_ms=cuda["median_ms"], pyg_ms=pyg_ms,
                       speedup=pyg_ms / cuda["median_ms"],
                       gnnc_extra_mib=gnnc_extra / 2**20, pyg_extra_mib=pyg_extra / 2**20,
                       kernels=cuda["kernels"], steps=cuda["step_ms"])
            if layer in ("gcn", "sage_mean"):
                # cuSPARSE through torch.sparse: the same aggregation width (64).
                src, dst = ei[0], ei[1]
                order = torch.argsort(dst * n + src)
                rowptr = torch.zeros(n + 1, dtype=torch.long, device="cuda")
                rowptr[1:] = torch.cumsum(torch.bincount(dst, minlength=n), 0)
                a = torch.sparse_csr_tensor(rowptr, src[order],
                                            torch.ones(e, device="cuda"), (n, n))
                h = torch.randn(n, 64, device="cuda")
                row["cusparse_ms"] = time_ms(lambda: torch.sparse.mm(a, h), reps=args.reps)
                spmm = [s["median_ms"] for s in cuda["step_ms"] if s["step"].startswith("spmm")]
                row["gnnc_spmm_ms"] = spmm[0] if spmm else None
                row["spmm_vs_cusparse"] = (row["gnnc_spmm_ms"] / row["cusparse_ms"]
                                           if spmm else None)
                del a, h
            rows.append(row)
            extra = ""
            if "cusparse_ms" in row and row["gnnc_spmm_ms"]:
                extra = (f"  spmm {row['gnnc_spmm_ms']:.4f} vs cuSPARSE "
                         f"{row['cusparse_ms']:.4f} ms ({row['spmm_vs_cusparse']:.2f}x)")
            print(f"{name:12} {e:9d} {layer:12} gnnc {cuda['median_ms']:8.4f} ms  "
                  f"PyG {pyg_ms:8.4f} ms  {row['speedup']:6.2f}x  "
                  f"mem {row['gnnc_extra_mib']:8.2f} vs {row['pyg_extra_mib']:8.2f} MiB{extra}",
                  flush=True)
            torch.cuda.empty_cache()
        edge_index = None
    misses = [f"{r['graph']}/{r['layer']}" for r in rows
              if r["edges"] > 100000 and r["speedup"] < 1.0]
    spmm_misses = [f"{r['graph']}/{r['layer']}" for r in rows
                   if r.get("spmm_vs_cusparse") and r["spmm_vs_cusparse"] > 1.5]
    print("slower than PyG on graphs > 100k edges:", ", ".join(misses) or "none")
    print("spmm group more than 1.5x cuSPARSE:", ", ".join(spmm_misses) or "none")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                           rows=rows, slower_than_pyg=misses,
                           spmm_over_1_5x_cusparse=spmm_misses), f, indent=2)


if __name__ == "__main__":
    main()
