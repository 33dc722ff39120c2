"""Issue 30, session 23: where the host time of a reddit-like sampled step
goes (cProfile of 40 steps, loader included), per variant of
prebuild.py (VARIANTS=off+trim,ahead+trim,...). Run on a GPU machine from
the repository root: python bench/probes/loader/host_profile.py
Needs bench/results/loader-ahead-h200-s23/build-ahead.patch applied (the
loader's builds ahead were measured and not merged; see that folder)."""
import cProfile, io, os, pstats, sys, time
sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("ROUNDS", "0")
import prebuild as P  # noqa: E402  (sets up the run, no rounds)
import torch
import torch.nn.functional as F

for name in os.environ.get("VARIANTS", "off,off+trim,ahead+trim").split(","):
    P.setv(name)
    run, args = P.run, P.args
    run.net.train()
    it = iter(run.train_loader)
    def steps(k):
        for _ in range(k):
            batch = next(it)
            run.opt.zero_grad()
            out = run.net(batch.x, batch.edge_index, *P.T.hop_counts(batch, args))[:batch.batch_size]
            F.cross_entropy(out, batch.y[:batch.batch_size]).backward()
            run.opt.step()
    steps(5)
    torch.cuda.synchronize()
    t0 = time.perf_counter(); steps(40); torch.cuda.synchronize()
    plain = (time.perf_counter() - t0) / 40 * 1e3
    pr = cProfile.Profile()
    pr.enable(); steps(40); torch.cuda.synchronize(); pr.disable()
    s = io.StringIO()
    st = pstats.Stats(pr, stream=s)
    st.sort_stats("tottime").print_stats(25)
    st.sort_stats("cumulative").print_stats(45)
    print(f"==== {name}: {plain:.2f} ms per step unprofiled\n{s.getvalue()}", flush=True)
