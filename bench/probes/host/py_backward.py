"""What a Python backward costs on this host (issue 28): host us per step
of `(f(x) * dy).sum().backward()` on a [1000, 64] CUDA tensor where f is
  native   x * 2 (a C++ autograd node)
  pyfn     a torch.autograd.Function doing x * 2 (forward and backward in
           Python: what gnnc's _Step is)
  pyfn_nop the same whose backward returns the gradient unchanged
  libop    a torch.library custom op with register_autograd (Python backward)
and the same step without backward (forward only, grad recording on).
Rounds interleaved (A B C D A B C D ...), median of the rounds printed.
    python bench/probes/host/py_backward.py [rounds]"""
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _cached import graph, per_call  # noqa: E402
import torch  # noqa: E402


class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


class Nop(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g


@torch.library.custom_op("probe::double", mutates_args=())
def _double(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@_double.register_fake
def _(x):
    return torch.empty_like(x)


def _bwd(ctx, g):
    return g * 2


_double.register_autograd(_bwd)

n, c, ei, x = graph("cuda" if torch.cuda.is_available() else "cpu")
xg = x.clone().requires_grad_()
dy = torch.randn_like(x)
fs = {"native": lambda t: t * 2, "pyfn": Double.apply, "pyfn_nop": Nop.apply,
      "libop": torch.ops.probe.double}
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
res = {(k, p): [] for k in fs for p in ("fwd", "fwd+bwd")}
for _ in range(rounds):
    for k, f in fs.items():
        res[(k, "fwd")].append(per_call(lambda: (f(xg) * dy).sum(), 1000))
        res[(k, "fwd+bwd")].append(per_call(lambda: (f(xg) * dy).sum().backward(), 1000))
for (k, p), v in res.items():
    print(f"{k:9s} {p:8s} median {statistics.median(v):8.1f} us  rounds "
          + " ".join(f"{a:.1f}" for a in v), flush=True)
