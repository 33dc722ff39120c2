"""Session 51: host time per phase of gnnc's op calls in bench/gine.py's
training step (the module built with phases.patch prints them at exit when
GNNC_OP_PHASES is set), and the op calls' host time seen from Python.
    GNNC_OP_PHASES=1 python op_phases.py QM9_DIR [steps]"""
import os, pathlib, sys, time
os.environ.setdefault("GNNC_JIT", "sync")
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gine as G  # noqa: E402

dev = torch.device("cuda")
pyg, ours, x, ei, ea = G.probe_setup(pathlib.Path(sys.argv[1]), dev)
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
ns = torch.ops.gnnc
real = {"call": ns.call, "call_backward": ns.call_backward}
clock = {k: [0.0, 0] for k in real}


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


params = list(ours.parameters())


def step():
    for p in params:
        p.grad = None
    ours(x, ei, ea).square().mean().backward()


for _ in range(20):
    step()
torch.cuda.synchronize()
ns.call, ns.call_backward = timed("call"), timed("call_backward")
t = time.perf_counter()
for _ in range(steps):
    step()
torch.cuda.synchronize()
print(f"{(time.perf_counter() - t) / steps * 1e3:.3f} ms a step (not synchronised per step)")
for kind, (s, n) in clock.items():
    print(f"host time per {kind}: {s / max(n, 1) * 1e6:.1f} us ({n} calls)")
