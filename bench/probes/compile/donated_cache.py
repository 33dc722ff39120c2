#!/usr/bin/env python3
"""PyTorch's on-disk FX graph cache and `donated_buffer` (no gnnc involved).

A compiled model's second backward with `retain_graph=True` is refused
("compiled with non-empty donated buffers"); PyTorch's message suggests
`torch._functorch.config.donated_buffer = False`. But Inductor's FX graph
cache does not key the backward on that setting: a backward compiled earlier
with donated buffers (any ordinary training run, which fills the cache) is
loaded again, and its in-place reuse of a saved activation corrupts the
second backward. Found with gnnc's compiled GIN model (a gradient off by
0.39) and reproduced here with a pure-PyTorch custom op; seen with PyTorch
2.11 and 2.15 on the CPU. Way out: a fresh `TORCHINDUCTOR_CACHE_DIR` or
`TORCHINDUCTOR_FX_GRAPH_CACHE=0` when turning donated buffers off
(docs/Python.md, torch.compile).

    python bench/probes/compile/donated_cache.py

Runs two fresh processes sharing one empty cache folder: (1) donated
buffers on, one backward (fills the cache); (2) donated buffers off, two
backwards with retain_graph=True. Prints the second process's largest
gradient difference from eager for each backward."""
import os, subprocess, sys, tempfile

CHILD = r'''
import os, torch, torch.nn.functional as F, torch._functorch.config as fc
fc.donated_buffer = os.environ["DONATED"] == "1"
retain = os.environ["RETAIN"] == "1"

@torch.library.custom_op("probe::lin", mutates_args=())
def lin(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x @ w.t()
@lin.register_fake
def _(x, w):
    return x.new_empty(x.shape[0], w.shape[0])

@torch.library.custom_op("probe::lin_bwd", mutates_args=())
def lin_bwd(x: torch.Tensor, w: torch.Tensor, dy: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return dy @ w, dy.t() @ x
@lin_bwd.register_fake
def _(x, w, dy):
    return torch.empty_like(x), torch.empty_like(w)

def setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs)
def backward(ctx, dy):
    x, w = ctx.saved_tensors
    return lin_bwd(x, w, dy)
lin.register_autograd(backward, setup_context=setup)

g = torch.Generator().manual_seed(1)
x = torch.randn(30, 8, generator=g, dtype=torch.float64)
y = torch.randint(3, (30,), generator=g)
w1 = torch.randn(16, 8, generator=g, dtype=torch.float64, requires_grad=True)
w2 = torch.randn(3, 16, generator=g, dtype=torch.float64, requires_grad=True)
def model(x):
    return lin(lin(x, w1).relu(), w2)
ref = torch.autograd.grad(F.cross_entropy(model(x), y), [w1, w2])
loss = F.cross_entropy(torch.compile(model)(x), y)
diffs = []
for _ in range(2 if retain else 1):
    got = torch.autograd.grad(loss, [w1, w2], retain_graph=retain)
    diffs.append(max((a - b).abs().max().item() for a, b in zip(ref, got)))
print("backward differences from eager:", ", ".join(f"{d:.3g}" for d in diffs))
'''

with tempfile.TemporaryDirectory() as cache:
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache)
    for donated, retain, what in (("1", "0", "1: donated buffers on, one backward"),
                                  ("0", "1", "2: donated buffers off, retain_graph twice")):
        print(what, flush=True)
        subprocess.run([sys.executable, "-c", CHILD], check=True,
                       env=dict(env, DONATED=donated, RETAIN=retain))
