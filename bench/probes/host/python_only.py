"""The Python part of a gnnc.nn layer call, on any machine: gnnc's ops are
replaced by stubs that return the outputs of their first real call, so the
time per call is the layer's Python (checks, graph lookup, autograd.Function)
and PyTorch's dispatch around it, not the kernels (issue 28's host path).
    python bench/probes/host/python_only.py [--calls N] [--autocast] [layers...]
--autocast: the layers' calls under torch.autocast(bfloat16) on the device
(float32 x and parameters), the backward outside it."""
import argparse, os, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import torch  # noqa: E402
import gnnc.nn  # noqa: E402
import nn_layers as B  # noqa: E402
import _cached  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("layers", nargs="*", default=B.LAYERS)
ap.add_argument("--calls", type=int, default=2000)
ap.add_argument("--device", default="cpu")
ap.add_argument("--autocast", action="store_true")
args = ap.parse_args()

_cached.StubbedOps().__enter__()  # for the whole run
torch.manual_seed(0)
n, e, c = 10, 30, 8
ei = torch.randint(0, n, (2, e), device=args.device)
x = torch.randn(n, c, device=args.device)
xg = x.clone().requires_grad_()


def per_call(f, k):
    for _ in range(50):
        f()
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(k):
            f()
        best = min(best, (time.perf_counter() - t) / k * 1e6)
    return best


lin = torch.nn.Linear(c, c).to(args.device)
with torch.no_grad():
    print(f"{'Linear':12s} fwd {per_call(lambda: lin(x), args.calls):7.1f} us", flush=True)
print(f"{'Linear':12s} fwd+bwd {per_call(lambda: lin(xg).sum().backward(), args.calls // 2):7.1f} us")
for name in args.layers:
    layer = B.make(name, gnnc, c).to(args.device)

    def ac():
        return torch.autocast(args.device, dtype=torch.bfloat16, enabled=args.autocast)

    def fwd():
        with torch.no_grad(), ac():
            layer(x, ei)

    def fwd_bwd():
        with ac():
            y = layer(xg, ei)
        y.sum().backward()
    f = per_call(fwd, args.calls)
    fb = per_call(fwd_bwd, args.calls // 2)
    print(f"{name:12s} fwd {f:7.1f} us  fwd+bwd {fb:7.1f} us", flush=True)
