"""How far can GINE's training step on QM9 batches go on this host? The
forward+backward (bench/gine.py's model and batch) of: PyG; gnnc.nn as it
is; with bench/results/gine-host-s34/fold-lin.patch
applied (GINE's `lin` inside the gnn function), gnnc with `lin` in PyTorch
again; gnnc with the edge projection taken out of the step (features already
[E, hidden], no `lin`: the bound of folding `lin` into the gnn function);
gnnc with its ops stubbed (memoised outputs: the Python and dispatch
alone); and the model's shared part alone (the encoder, the ReLUs, the loss
and the autograd engine, each conv an identity). Also the host time of each
gnnc op call (perf_counter around the call, no synchronisation).
    python bench/probes/host/gine_bounds.py QM9_DIR [--iters 200]"""
import argparse, os, pathlib, sys, time
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gine as G  # noqa: E402
import molecules  # noqa: E402
import _cached  # noqa: E402  (StubbedOps; this folder is the script's)

ap = argparse.ArgumentParser()
ap.add_argument("dataset", type=pathlib.Path)
ap.add_argument("--iters", type=int, default=200)
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--device", default="cuda")
args = ap.parse_args()
dev = torch.device(args.device)
import gnnc.nn  # noqa: E402

pyg, ours, x, ei, ea = G.probe_setup(args.dataset, dev)
hidden = 64
# The same model without the edge projection: features fixed at [E, hidden].
nolin = G.Net(gnnc.nn, 16, hidden, 3, None).to(dev)
ea_h = torch.randn(ei.size(1), hidden, device=dev)


class Shared(torch.nn.Module):
    """The model's part every side pays: encoder, ReLUs, loss, engine."""
    def __init__(self, m):
        super().__init__()
        self.encoder = m.encoder
        self.weights = torch.nn.ParameterList(
            p for c in m.convs for p in c.parameters())

    def forward(self, x, edge_index, edge_attr):
        x = self.encoder(x)
        for i in range(3):
            if i < 2:
                x = torch.relu(x)
        return x


from gnnc.nn import conv  # noqa: E402
hooked = getattr(conv, "_hooked", None)
lins = [c.lin for c in ours.convs]
ns = torch.ops.gnnc
real = {"call": ns.call, "call_backward": ns.call_backward}
clock = {"call": [0.0, 0], "call_backward": [0.0, 0]}


def timed(kind):
    fn = real[kind]

    def f(*a):
        t = time.perf_counter()
        r = fn(*a)
        c = clock[kind]
        c[0] += time.perf_counter() - t
        c[1] += 1
        return r
    return f


stubs = _cached.StubbedOps()


def train(m, *b):
    params = list(m.parameters())

    def f():
        for p in params:
            p.grad = None
        m(*b).square().mean().backward()
    return f


sides = {
    "pyg": (train(pyg, x, ei, ea), None),
    "gnnc": (train(ours, x, ei, ea), None),
}
if hasattr(conv, "_hooked"):  # bench/results/gine-host-s34/fold-lin.patch applied
    sides["gnnc, edge lin in PyTorch"] = (train(ours, x, ei, ea), "unfolded")
sides |= {
    "gnnc, no edge lin": (train(nolin, x, ei, ea_h), None),
    "gnnc, ops stubbed": (train(ours, x, ei, ea), "stub"),
    "shared part only": (train(Shared(ours).to(dev), x, ei, ea), None),
}
best = {}
for _ in range(args.rounds):
    for name, (f, mode) in sides.items():
        if mode == "stub":
            stubs.__enter__()
        if mode == "unfolded":  # as a hook on lin would: lin runs in PyTorch
            conv._hooked = lambda m: m in lins or hooked(m)
        ms = molecules.median_ms(lambda: f(), [()], args.iters, 20, dev)
        stubs.__exit__()
        if hooked is not None:
            conv._hooked = hooked
        best[name] = min(best.get(name, ms), ms)
ns.call, ns.call_backward = timed("call"), timed("call_backward")
molecules.median_ms(lambda: sides["gnnc"][0](), [()], args.iters, 5, dev)
ns.call, ns.call_backward = real["call"], real["call_backward"]
print(f"device {torch.cuda.get_device_name(dev) if dev.type == 'cuda' else 'cpu'}; "
      f"{x.size(0)} nodes, {ei.size(1)} edges")
print("| step | fwd+bwd ms | PyG / this |")
print("| --- | ---: | ---: |")
for name, ms in best.items():
    print(f"| {name} | {ms:.3f} | {best['pyg'] / ms:.2f} |")
for kind, (t, n) in clock.items():
    print(f"host time per {kind}: {t / max(n, 1) * 1e6:.1f} us ({n} calls)")
