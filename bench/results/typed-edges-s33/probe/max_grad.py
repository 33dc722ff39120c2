"""The backward of a max over an edge DAG (max_only.mlir: out[v] = max over
u -> v of tanh(x[u] * w)) on CUDA against the CPU reference through
gnnc.compile, gradient by gradient, and against PyTorch's scatter_reduce
amax (same tie rule: shared equally)."""
import pathlib, sys
import torch
import gnnc

src = (pathlib.Path(__file__).parent / "max_only.mlir").read_text()
fn = gnnc.compile(src, function="fused_aggregation")
torch.manual_seed(0)
n, e = 2000, 20000
ei = torch.stack([torch.randint(0, n, (e,)), torch.randint(0, n, (e,))])
x = torch.rand(n, 64) * 2 - 1
w = (torch.rand(64) * 2 - 1) * 0.125
a = torch.rand(n, 1)
dy = torch.rand(n, 64) * 2 - 1


def run(dev):
    xs = x.to(dev).requires_grad_()
    ws = w.to(dev).requires_grad_()
    out = fn(ei.to(dev), xs, ws, a.to(dev), num_nodes=n)
    gx, gw = torch.autograd.grad(out, (xs, ws), dy.to(dev))
    return out.cpu(), gx.cpu(), gw.cpu()


def torch_ref():
    xs = x.clone().requires_grad_()
    ws = w.clone().requires_grad_()
    t = torch.tanh(xs[ei[0]] * ws)
    out = torch.zeros(n, 64).scatter_reduce(0, ei[1][:, None].expand(-1, 64), t, "amax",
                                            include_self=False)
    gx, gw = torch.autograd.grad(out, (xs, ws), dy)
    return out, gx, gw


sides = {"torch": torch_ref(), "cpu": run("cpu")}
if torch.cuda.is_available():
    sides["cuda"] = run("cuda")
for name in ("out", "dx", "dw"):
    i = ("out", "dx", "dw").index(name)
    t = sides["torch"][i]
    for s, v in sides.items():
        if s != "torch":
            d = (v[i] - t).abs()
            print(f"{name} {s} vs torch: max |diff| {d.max():.3e}, |ref| max "
                  f"{t.abs().max():.3e}, zero in {s}: {(v[i] == 0).float().mean():.3f}, "
                  f"in torch: {(t == 0).float().mean():.3f}")
