# The max aggregation's backward with many ties (issue 29): bf16 features
# drawn as the scoreboard's gnn-run draws them (uniform [-1, 1), rounded),
# forward and forward+backward by CUDA events, f32 beside it, and the
# gradient checked against torch's scatter_reduce(amax) (ties share dy
# equally in both). Run from the repository root with the module to test
# first on PYTHONPATH:
#   python3 bench/probes/ties/max_bf16.py DATASETS musae-github blogcatalog
# A name `random:NODES:EDGES` is a seeded uniform random graph instead (a
# dense one has most rows above a block of edges).
import pathlib
import sys

import torch

sys.path.insert(0, "bench")
from nn_layers import load_graph, median_ms  # noqa: E402
import gnnc  # noqa: E402

F = 128
dev = torch.device("cuda")
for name in sys.argv[2:]:
    if name.startswith("random:"):
        n, m = (int(v) for v in name.split(":")[1:])
        ei = torch.randint(n, (2, m), device=dev,
                           generator=torch.Generator(device=dev).manual_seed(1))
    else:
        ei, n = load_graph(pathlib.Path(sys.argv[1]) / name, dev)
    for dtype, ir in ((torch.bfloat16, "bf16"), (torch.float32, "f32")):
        fn = gnnc.compile(f"""
func.func @max(%g: !gnn.graph, %x: tensor<?x{F}x{ir}> {{gnn.differentiable}}) -> tensor<?x{F}x{ir}> {{
  %o = gnn.spmm max %g, %x : tensor<?x{F}x{ir}> -> tensor<?x{F}x{ir}>
  return %o : tensor<?x{F}x{ir}>
}}""")
        g = gnnc.Graph(ei, num_nodes=n)
        gen = torch.Generator(device=dev).manual_seed(0)
        x = (torch.rand(n, F, device=dev, generator=gen) * 2 - 1).to(dtype).requires_grad_()
        dy = (torch.rand(n, F, device=dev, generator=gen) * 2 - 1).to(dtype)
        fwd = median_ms(lambda: fn(g, x), 20, 5)

        def step():
            x.grad = None
            fn(g, x).backward(dy)
        both = median_ms(step, 20, 5)
        step()
        # torch's amax gradient: dy split equally among the tying sources.
        xr = x.detach().double().requires_grad_()
        idx = ei[1].view(-1, 1).expand(-1, F)
        ref = xr.new_zeros(n, F).scatter_reduce(0, idx, xr[ei[0]], "amax", include_self=False)
        ref.backward(dy.double())
        err = ((x.grad.double() - xr.grad).abs() / (1 + xr.grad.abs())).max().item()
        ties = int((ref.detach()[ei[1]] == xr.detach()[ei[0]]).sum() - (ref.detach() != 0).sum())
        print(f"{name} {ir} fwd {fwd:.3f} ms fwd+bwd {both:.3f} ms bwd~{both - fwd:.3f} "
              f"grad vs torch max rel {err:.2e} extra-tying edge elements ~{ties}", flush=True)
