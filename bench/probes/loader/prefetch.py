"""Issue 30, session 31: the reddit-like sampled epoch of train_ddp.py with
the loader sampling ahead on its own thread (prefetch=1, which also builds
the batch's gnnc graphs there) against sampling when the loop asks
(prefetch=0), untrimmed and trimmed (--trim: bipartite layers); variants
interleaved epoch by epoch in one process (one Run), so that the host's
speed, which differs between calls by 10-50 %, is the same for all. Run on
a GPU machine from the repository root:
  python bench/probes/loader/prefetch.py
Environment: G (graph, default reddit-like), ROUNDS (default 4), VARIANTS
(comma-separated names of ALL below, default p0,p1,p0t,p1t), PHASES (1:
host time per phase of a step), PROFILE (a variant: cProfile of 40 steps).
Session 32: a name ending in P runs the trimmed layers as gnnc did before
the dialect had bipartite graphs (padded_bipartite below: the aggregation
over max(num_src, num_dst) rows, sliced, then PyTorch's matmuls and bias),
the others as one bipartite gnn function per layer."""
import collections
import os
import statistics
import sys
import time

sys.path.insert(0, "examples/python")
import torch  # noqa: E402
import train_ddp as T  # noqa: E402

G = os.environ.get("G", "synthetic:232965:114615892:128:41")
ROUNDS = int(os.environ.get("ROUNDS", "4"))
# name: (prefetch, trim); a name ending in f: fused Adam (one kernel for all
# parameters) instead of foreach.
ALL = {"p0": (0, False), "p1": (1, False), "p0t": (0, True), "p1t": (1, True),
       "p1f": (1, False), "p1tf": (1, True), "p1tP": (1, True), "p1tfP": (1, True)}
NAMES = os.environ.get("VARIANTS", "p0,p1,p0t,p1t").split(",")
args = T.parse_args(["--graph", G, "--epochs", "1"])
dev = torch.device("cuda")
t0 = time.perf_counter()
run = T.Run(args, 0, 1, dev)
print(run.describe(), "|", torch.cuda.get_device_name(), f"| setup {time.perf_counter() - t0:.1f} s",
      flush=True)


OPTS = {"foreach": run.opt}

import torch.nn.functional as F  # noqa: E402
from gnnc.nn import _common, conv as C  # noqa: E402

FUSED_BIPARTITE = C.SAGEConv._bipartite


def padded_bipartite(self, name, x, edge_index, size, whole):
    """SAGEConv's bipartite layer as of session 31 (758a3a2): the homogeneous
    aggregation over max(num_src, num_dst) rows (the sources' features
    padded), its first num_dst rows, then sum_terms' matmuls and bias."""
    sides = ([self.lin_l], [self.lin_r] if self.root_weight else [])
    x_src, x_dst, ei, (ns, nd), _ = _common.linear_pair_inputs(
        name, x, edge_index, size, sides, self.flow, targets_required=False)
    aggr = C._SAGE_AGGR[self.aggr]
    dt = _common.compute_dtype(x_src, self.lin_l.weight.dtype)

    def pair(h):
        extra = max(ns, nd) - h.size(0)
        if extra > 0:
            h = torch.cat([h, h.new_zeros((extra,) + h.shape[1:])])
        h = _common.cast(dt, h)
        return _common.propagate(self, "sage", (int(h.size(1)), _common._DTYPES[dt], aggr),
                                 ei, (ns, nd), h)[:nd]
    if aggr in ("mean", "sum") and self.out_channels < x_src.size(1) and ns <= nd:
        terms = [("add", pair(F.linear(x_src, self.lin_l.weight)))]
    else:
        terms = [("mm", pair(x_src), self.lin_l.weight)]
    return terms + self._root_and_bias(x_dst)


def setv(name):
    prefetch, trim = ALL[name]
    args.trim = trim
    C.SAGEConv._bipartite = padded_bipartite if name.endswith("P") else FUSED_BIPARTITE
    kind = "fused" if name.rstrip("P").endswith("f") else "foreach"
    if kind not in OPTS:
        OPTS[kind] = torch.optim.Adam(run.net.parameters(), lr=args.lr, fused=True)
    run.opt = OPTS[kind]
    run.train_loader.prefetch = prefetch
    run.train_loader._forms = set()  # learned again (the first batches)


times = collections.defaultdict(list)
for name in NAMES:  # warm-up: every variant's kernels compiled
    setv(name)
    run.train_epoch(0)
for r in range(ROUNDS):
    for name in NAMES:
        setv(name)
        el, inl, seeds, loss, steps = run.train_epoch(r + 1)
        times[name].append((el * 1e3, inl * 1e3))
        print(f"round {r} {name:4s} epoch {el * 1e3:7.1f} ms  waiting for batches "
              f"{inl * 1e3:6.1f} ms  steps {steps}  loss {loss / steps:.4f}", flush=True)
print("== medians over rounds")
for name, v in times.items():
    e = [a for a, _ in v]
    print(f"{name:4s} epoch {statistics.median(e):7.1f} ms (min {min(e):7.1f}, max "
          f"{max(e):7.1f})  waiting {statistics.median(b for _, b in v):6.1f} ms", flush=True)

# Where the training loop's thread spends a step (host time; the loop never
# waits for the GPU with prefetch=1 except through the autograd engine and
# the caching allocator): PHASES=1.
if os.environ.get("PHASES", "1") == "1":
    import torch.nn.functional as F
    for name in NAMES:
        setv(name)
        run.net.train()
        ph = collections.Counter()
        run.sync()
        t0 = time.perf_counter()
        it = iter(run.train_loader)
        steps = 0
        while True:
            a = time.perf_counter()
            batch = next(it, None)
            b = time.perf_counter()
            ph["next"] += b - a
            if batch is None:
                break
            run.opt.zero_grad()
            out = run.net(batch.x, batch.edge_index,
                          *T.hop_counts(batch, args))[:batch.batch_size]
            loss = F.cross_entropy(out, batch.y[:batch.batch_size])
            c = time.perf_counter()
            ph["forward"] += c - b
            loss.backward()
            d = time.perf_counter()
            ph["backward"] += d - c
            run.opt.step()
            ph["adam"] += time.perf_counter() - d
            steps += 1
        run.sync()
        total = time.perf_counter() - t0
        print(f"== phases {name}: epoch {total * 1e3:.1f} ms, per step " +
              ", ".join(f"{k} {v / steps * 1e3:.3f} ms" for k, v in ph.items()), flush=True)
if os.environ.get("PROFILE"):
    import cProfile
    import pstats
    import torch.nn.functional as F
    setv(os.environ["PROFILE"])
    prof = cProfile.Profile()
    it = iter(run.train_loader)
    for i in range(60):
        if i == 20:
            prof.enable()
        batch = next(it)
        run.opt.zero_grad()
        out = run.net(batch.x, batch.edge_index, *T.hop_counts(batch, args))[:batch.batch_size]
        F.cross_entropy(out, batch.y[:batch.batch_size]).backward()
        run.opt.step()
    prof.disable()
    del it
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    pstats.Stats(prof).sort_stats("cumulative").print_stats(40)
