"""Where the host time of gnnc.nn layers goes inside C++ (issue 28): runs
each layer's forward (no_grad) and forward+backward on a cached 1,000-node
graph under sampler.c and writes one samples file per (layer, mode).
    python bench/probes/hostprof/sample_layers.py LIBSAMPLER OUTDIR [layers...]
Symbolise with analyze.py against the unstripped _gnnc module."""
import ctypes, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "host"))
from _cached import graph, op_calls, per_call  # noqa: E402  (sets GNNC_JIT, sys.path)
import torch  # noqa: E402
import nn_layers as B  # noqa: E402

lib = ctypes.CDLL(sys.argv[1])
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
dev = "cuda"
n, c, ei, x = graph(dev)


def loop(f, k):
    return per_call(f, k, warmup=50)


STATS = ("num_device_alloc", "num_device_free", "num_alloc_retries",
         "num_sync_all_streams")


def sampled(tag, f, k):
    before = torch.cuda.memory_stats()
    plain = loop(f, k)
    after = torch.cuda.memory_stats()
    delta = {s: after.get(s, 0) - before.get(s, 0) for s in STATS}
    lib.sampler_reset()
    lib.sampler_start(100)
    under = loop(f, k)
    got = lib.sampler_stop()
    lib.sampler_dump(os.path.join(out, f"{tag}.txt").encode())
    print(f"{tag}: {plain:.1f} us/call ({under:.1f} sampled, {got} samples) "
          f"allocator over {k + 50} calls: {delta}", flush=True)


def profiled(tag, f, k):
    import cProfile, io, pstats
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(k):
        f()
    pr.disable()
    torch.cuda.synchronize()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(16)
    print(f"== cProfile {tag} ({k} calls)")
    print("\n".join(s.getvalue().splitlines()[4:26]), flush=True)


for name in sys.argv[3:] or ["gin", "gcn", "gat"]:
    ours, pyg = B.pair(name, c, dev)
    with torch.no_grad():
        print(f"{name}-nograd PyG: {loop(lambda: pyg(x, ei), 3000):.1f} us/call")
        sampled(f"{name}-nograd", lambda: ours(x, ei), 10000)
        profiled(f"{name}-nograd", lambda: ours(x, ei), 1000)
        fn, edge_index, nn_, tensors, graph = op_calls(lambda: ours(x, ei))[0]
        args = (fn._target, edge_index, nn_, -1, graph, list(tensors))
        sampled(f"{name}-op", lambda: torch.ops.gnnc.call(*args), 10000)
    xg = x.clone().requires_grad_()
    dy = torch.randn_like(ours(xg, ei))
    def step():
        xg.grad = None
        for p in ours.parameters():
            p.grad = None
        (ours(xg, ei) * dy).sum().backward()
    sampled(f"{name}-step", step, 3000)

    def pyg_step():
        xg.grad = None
        for p in pyg.parameters():
            p.grad = None
        (pyg(xg, ei) * dy).sum().backward()
    print(f"{name}-step PyG: {loop(pyg_step, 1000):.1f} us/call", flush=True)
