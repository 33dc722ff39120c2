"""Where the host time of gnnc.nn layers goes inside C++ (issue 28): runs
each layer's forward (no_grad) and forward+backward on a cached 1,000-node
graph under sampler.c and writes one samples file per (layer, mode).
    python bench/probes/hostprof/sample_layers.py LIBSAMPLER OUTDIR [layers...]
Symbolise with analyze.py against the unstripped _gnnc module."""
import ctypes, os, sys, time
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import nn_layers as B
import gnnc._core as core

lib = ctypes.CDLL(sys.argv[1])
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
dev = "cuda"
torch.manual_seed(0)
n, e, c = 1000, 10000, 64
ei = torch.randint(0, n, (2, e), device=dev)
x = torch.randn(n, c, device=dev)


def loop(f, k):
    for _ in range(50):
        f()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(k):
        f()
    h = (time.perf_counter() - t) / k * 1e6
    torch.cuda.synchronize()
    return h


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


calls = []
orig = core.Function._apply
def rec(self, edge_index, num_nodes, tensors, graph=None):
    calls.append((self, edge_index, num_nodes, tensors, graph))
    return orig(self, edge_index, num_nodes, tensors, graph)


def first_call(layer):
    """The arguments of the layer's first gnnc op call (recorded for this
    one call only: a recorder left in place keeps every call's tensors,
    which the first run of this probe did)."""
    calls.clear()
    core.Function._apply = rec
    try:
        layer(x, ei)
    finally:
        core.Function._apply = orig
    return calls[0]

for name in sys.argv[3:] or ["gin", "gcn", "gat"]:
    ours, pyg = B.pair(name, c, dev)
    with torch.no_grad():
        print(f"{name}-nograd PyG: {loop(lambda: pyg(x, ei), 3000):.1f} us/call")
        sampled(f"{name}-nograd", lambda: ours(x, ei), 10000)
        profiled(f"{name}-nograd", lambda: ours(x, ei), 1000)
        fn, edge_index, nn_, tensors, graph = first_call(ours)
        graph = graph if graph is not None else core._handle(edge_index, nn_)
        args = (fn._target, edge_index, nn_, graph, list(tensors))
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
