#!/usr/bin/env python3
"""JIT latency (issue 28, item 4): how long kernels take to compile, and what
a training run waits for them. Prints tables to stdout.

  compile  (no GPU needed) NVRTC time of every kernel of a GAT layer's
           training step (examples/gat.mlir, --grad) for a graph's statistics,
           through `gnn-run --compile-only`, with an empty kernel cache each
           time: GNNC_JIT_THREADS=1 (serial) against the default pool; then
           each unit's time and the whole source as one NVRTC call
           (gnn-runtime-bench --jit-units).
  cold     (GPU) a fresh process with an empty cache: time from the start of
           the process (before `import gnnc`) to the end of the first training
           step of a 2-layer gnnc.nn GAT on Cora (train_cora.py's model),
           for GNNC_JIT=async and sync and GNNC_JIT_THREADS=1; then the step
           after data loading split into building the model and Adam (which
           imports torch._dynamo on recent PyTorch, with any library) and
           the first step itself: forward, backward, Adam step. Each mode
           --repeat times, interleaved, medians. --warm-torch: PyTorch's own
           first-use costs (cuBLAS, dropout, loss, Adam on the step's shapes)
           paid and timed before the first step, and PyG's GAT as a mode.
  sampled  (GPU) a fresh process with an empty cache: 40 training steps of the
           same GAT on subgraphs induced by 20% of the nodes of GRAPH (a data
           set folder: meta.txt, edges.txt.gz; random features), each step
           timed to its end (synchronised); the first step, the slowest
           later one and how many later ones take over 100 ms.
  all      compile, then (with a GPU) cold and sampled.

  python3 bench/jit_latency.py all --graph /path/to/datasets/musae-github
Run from the repository root with PYTHONPATH=build/python (scripts/run.sh
style); --build DIR names another build folder.
"""

import argparse
import gzip
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def table(title, header, rows):
    print(f"\n{title}")
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    line = lambda r: "  ".join(str(x).rjust(w) for x, w in zip(r, widths))  # noqa: E731
    print(line(header))
    print(line(["-" * w for w in widths]))
    for r in rows:
        print(line(r))


def run_env(extra, cache):
    env = dict(os.environ)
    env.update(extra)
    env["GNNC_CACHE_DIR"] = cache
    return env


# --------------------------------------------------------------------------
# compile: NVRTC only, no device


def cmd_compile(args):
    gnn_run = pathlib.Path(args.build) / "bin" / "gnn-run"
    threads = os.cpu_count() or 1
    rows = []
    for label, extra in [("serial (GNNC_JIT_THREADS=1)", {"GNNC_JIT_THREADS": "1"}),
                         (f"pool (default, {min(threads, 16)} threads)", {})]:
        walls, compiles = [], []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as cache:
                t0 = time.perf_counter()
                out = subprocess.run(
                    [str(gnn_run), str(ROOT / "examples" / "gat.mlir"),
                     f"--graph={args.stats_graph}", "--backend=cuda",
                     "--compile-only", "--grad"],
                    env=run_env(extra, cache), check=True,
                    capture_output=True, text=True).stdout
                walls.append(time.perf_counter() - t0)
                cuda = json.loads(out)["cuda"]
                # The forward compiles every unit; the backward's are then
                # memory hits (the training step's Programs share kernels).
                compiles.append(sum(cuda[p]["compile_ms"] for p in ("fwd", "bwd")))
                units = cuda["fwd"]["units"]
        rows.append([label, units, f"{min(compiles):.0f}",
                     f"{statistics.median(compiles):.0f}",
                     f"{statistics.median(walls):.2f}"])
    table(f"NVRTC, cold cache: GAT training step (examples/gat.mlir --grad) "
          f"for {args.stats_graph}'s statistics, {args.repeat} runs, "
          f"{os.cpu_count()} CPUs",
          ["mode", "units", "compile ms (best)", "compile ms (median)",
           "gnn-run wall s"], rows)
    serial, pool = float(rows[0][3]), float(rows[1][3])
    print(f"speed-up (median): {serial / pool:.2f}x")
    # Per unit, and the whole source as one NVRTC call (the old way).
    bench = pathlib.Path(args.build) / "bin" / "gnn-runtime-bench"
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([str(gnn_run), str(ROOT / "examples" / "gat.mlir"),
                        f"--graph={args.stats_graph}", "--backend=cuda",
                        "--compile-only", "--grad",
                        f"--dump-program={tmp}/gat.json"],
                       env=run_env({}, tmp + "/cache"), check=True,
                       capture_output=True)
        print("\nPer unit (the forward Program, which holds every kernel of the "
              "step), no cache:")
        sys.stdout.flush()
        subprocess.run([str(bench), "--jit-units", f"{tmp}/gat.json.fwd"],
                       check=True)


# --------------------------------------------------------------------------
# cold / sampled: one child process each (python3 jit_latency.py _child ...)


def load_edges(path):
    import torch
    path = pathlib.Path(path)
    meta = dict(line.split(maxsplit=1) for line in open(path / "meta.txt"))
    with gzip.open(path / "edges.txt.gz", "rt") as fh:
        edges = [tuple(map(int, line.split()[:2])) for line in fh
                 if line.strip() and not line.startswith("#")]
    # Undirected graphs are listed both ways (shared/datasets/README.md).
    ei = torch.tensor(edges, dtype=torch.int64).t().contiguous()
    return ei, int(meta["nodes"])


def warm_torch(x, y, rows, classes):
    """PyTorch's own first-use costs (cuBLAS handle and kernels, the
    dropout's generator, the loss and its backward, an Adam step), paid by
    any library's first step: here on tensors of a GAT step's shapes on
    Cora, so that a first step timed after it is the library's own."""
    import torch
    import torch.nn.functional as F
    w = torch.randn(x.shape[1], 64, device=x.device, requires_grad=True)
    h = F.elu(F.dropout(x, p=0.6) @ w)
    F.cross_entropy(h[rows][:, :classes], y[rows]).backward()
    torch.optim.Adam([w], lr=0.005).step()


def child(args):
    t_start = float(args.t0)
    import torch
    t_torch = time.perf_counter()
    import torch.nn.functional as F
    sys.path.insert(0, str(ROOT / "examples" / "python"))
    import gnnc.nn as gnn  # noqa: F401  (the import is part of the cold start)
    from train_cora import GAT, find_dataset, load_planetoid
    dev = torch.device(args.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    torch.manual_seed(0)
    result = {}
    if args.what == "cold":
        x, ei, y, masks, classes = load_planetoid(find_dataset("cora"), dev)
        t_data = time.perf_counter()
        lib = gnn
        if args.lib == "pyg":
            import torch_geometric.nn as lib
        model = GAT(lib, x.shape[1], classes).to(dev)
        # The optimiser's construction imports torch._dynamo on recent
        # PyTorch (a second or more, paid with any library): timed apart.
        opt = torch.optim.Adam(model.parameters(), lr=0.005)
        rows = masks["train"].nonzero().squeeze(1)
        sync()
        t_model = time.perf_counter()
        if args.warm_torch:
            warm_torch(x, y, rows, classes)
            sync()
        t_warm = time.perf_counter()
        out = model(x, ei)
        sync()
        t_fwd = time.perf_counter()
        F.cross_entropy(out[rows], y[rows]).backward()
        sync()
        t_bwd = time.perf_counter()
        opt.step()
        sync()
        t_end = time.perf_counter()
        # Data loading (text parsing) is not the JIT's: reported apart.
        result = {"total_s": time.time() - t_start,
                  "after_torch_s": t_end - t_torch,
                  "first_step_s": t_end - t_data,
                  "setup_s": t_model - t_data, "torch_warm_s": t_warm - t_model,
                  "forward_s": t_fwd - t_warm,
                  "backward_s": t_bwd - t_fwd, "optimiser_step_s": t_end - t_bwd}
    else:
        ei_all, n = load_edges(args.graph)
        ei_all = ei_all.to(dev)
        fin, classes = 128, 8
        model = GAT(gnn, fin, classes).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=0.005)
        gen = torch.Generator(device="cpu").manual_seed(1)
        times = []
        for _ in range(args.steps):
            keep = torch.randperm(n, generator=gen)[: max(1, n // 5)].to(dev)
            mask = torch.zeros(n, dtype=torch.bool, device=dev)
            mask[keep] = True
            relabel = torch.full((n,), -1, dtype=torch.int64, device=dev)
            relabel[keep] = torch.arange(keep.numel(), device=dev)
            sub = ei_all[:, mask[ei_all[0]] & mask[ei_all[1]]]
            sub = relabel[sub]
            m = keep.numel()
            x = torch.randn(m, fin, device=dev)
            y = torch.randint(0, classes, (m,), device=dev)
            sync()
            t0 = time.perf_counter()
            opt.zero_grad()
            F.cross_entropy(model(x, sub), y).backward()
            opt.step()
            sync()
            times.append((time.perf_counter() - t0) * 1e3)
        from gnnc import _core
        keys = {k[1] for m in _core._modules.values()
                for k in (*m.training.ready, *m.training.pending())}
        result = {"times_ms": times, "schedule_keys": len(keys)}
    print("RESULT " + json.dumps(result))


def spawn(what, extra, args, child_args=()):
    with tempfile.TemporaryDirectory() as cache:
        cmd = [sys.executable, __file__, "_child", what, "--t0", repr(time.time()),
               "--steps", str(args.steps), "--device", args.device] + list(child_args)
        if args.graph:
            cmd += ["--graph", args.graph]
        env = run_env(extra, cache)
        env["PYTHONPATH"] = str(pathlib.Path(args.build) / "python") + (
            os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        out = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if out.returncode:
            sys.exit(f"jit_latency: {what} {extra} failed:\n{out.stderr[-4000:]}")
        line = [l for l in out.stdout.splitlines() if l.startswith("RESULT ")][-1]
        return json.loads(line[len("RESULT "):])


MODES = [("async", {"GNNC_JIT": "async"}),
         ("sync", {"GNNC_JIT": "sync"}),
         ("sync, GNNC_JIT_THREADS=1", {"GNNC_JIT": "sync", "GNNC_JIT_THREADS": "1"})]


def cmd_cold(args):
    """Each mode --repeat times, the modes interleaved (the first process
    of a machine also pays for reading the libraries from disk: a fixed
    order would charge it to the first mode); with --warm-torch PyTorch's
    own first-use costs timed apart, and PyG's GAT as a further mode (the
    first step any library pays). Medians of the repeats."""
    modes = [(label, extra, "gnnc") for label, extra in MODES]
    child_args = []
    if args.warm_torch:
        child_args.append("--warm-torch")
        modes.append(("PyG's GAT (no gnnc kernels)", {}, "pyg"))
    runs = {label: [] for label, _, _ in modes}
    for _ in range(args.repeat):
        for label, extra, lib in modes:
            runs[label].append(spawn("cold", extra, args, child_args + ["--lib", lib]))
    med = lambda rs, k: statistics.median(r[k] for r in rs)  # noqa: E731
    rows = []
    for label, _, _ in modes:
        rs = runs[label]
        step = [r["forward_s"] + r["backward_s"] + r["optimiser_step_s"] for r in rs]
        rows.append([label, f"{med(rs, 'total_s'):.2f}", f"{med(rs, 'after_torch_s'):.2f}",
                     f"{med(rs, 'first_step_s'):.2f}", f"{med(rs, 'setup_s'):.2f}",
                     f"{med(rs, 'torch_warm_s'):.2f}", f"{statistics.median(step):.2f}",
                     f"{med(rs, 'forward_s'):.2f}", f"{med(rs, 'backward_s'):.2f}",
                     f"{med(rs, 'optimiser_step_s'):.2f}",
                     " ".join(f"{s:.2f}" for s in step)])
    table(f"Cold start (empty kernel cache, fresh process): 2-layer GAT on Cora, "
          f"median of {args.repeat}",
          ["mode", "process start to end of step 1 (s)",
           "after `import torch` (s)", "step 1 after data loading (s)",
           "model + Adam built (s)", "PyTorch warm-up (s)", "first step (s)", "forward",
           "backward", "Adam step", "first steps (s)"], rows)


def cmd_sampled(args):
    if not args.graph:
        sys.exit("jit_latency: sampled needs --graph FOLDER")
    rows = []
    for label, extra in MODES[:2]:
        r = spawn("sampled", extra, args)
        t = r["times_ms"]
        later = t[1:]
        rows.append([label, r["schedule_keys"], f"{t[0]:.0f}", f"{max(later):.1f}",
                     sum(v > 100 for v in later), f"{statistics.median(later):.1f}",
                     f"{sum(t) / 1e3:.2f}"])
    table(f"{args.steps} GAT training steps on 20%-node subgraphs of "
          f"{pathlib.Path(args.graph).name} (fresh process, empty cache)",
          ["GNNC_JIT", "schedule keys", "step 1 ms", "slowest later ms", "later > 100 ms",
           "median later ms", "total s"], rows)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("what", choices=["compile", "cold", "sampled", "all", "_child"])
    p.add_argument("child_what", nargs="?")
    p.add_argument("--graph", help="data set folder for 'sampled'")
    p.add_argument("--stats-graph", default="cora",
                   help="gnn-run --graph for 'compile' (default cora)")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--build", default=str(ROOT / "build"))
    p.add_argument("--warm-torch", action="store_true",
                   help="cold: time PyTorch's own first-use costs apart (a matmul, "
                        "dropout, loss and Adam step on the step's shapes) and add "
                        "PyG's GAT as a mode")
    p.add_argument("--lib", default="gnnc", choices=["gnnc", "pyg"], help=argparse.SUPPRESS)
    p.add_argument("--t0")
    # cpu: a smoke test of the script on the reference evaluator (no JIT).
    p.add_argument("--device", default="cuda", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.what == "_child":
        args.what = args.child_what
        return child(args)
    if args.what in ("compile", "all"):
        cmd_compile(args)
    if args.what in ("cold", "sampled", "all"):
        import torch
        if args.device == "cuda" and not torch.cuda.is_available():
            if args.what == "all":
                print("\n(no GPU: cold and sampled skipped)")
                return
            sys.exit("jit_latency: no GPU")
    if args.what in ("cold", "all"):
        cmd_cold(args)
    if args.what in ("sampled", "all") and (args.graph or args.what == "sampled"):
        cmd_sampled(args)


if __name__ == "__main__":
    main()
