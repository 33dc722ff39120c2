"""gnnc.nn on CUDA tensors against PyG on the CPU: every layer configuration
of test_nn.py on its four graphs (float32 and float64), outputs and the
gradients of x and every parameter; a 2-layer GAT with attention dropout
trains under torch.compile(fullgraph=True). Skipped without a GPU."""

import pytest
import torch

import test_nn as base

gnnc = pytest.importorskip("gnnc")
if not (torch.cuda.is_available() and gnnc.cuda_available()):
    pytest.skip("no usable GPU", allow_module_level=True)

DEV = torch.device("cuda")

def close(got, want, dtype):
    # fp32 kernels against PyG's fp32 CPU code: different summation orders.
    t = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(got.cpu(), want, **t)

@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("graph", list(base.GRAPHS))
@pytest.mark.parametrize("case", base.IDS)
def test_cuda_matches_pyg(case, graph, dtype):
    ours, pyg = base.make(base.BY_ID[case], dtype)
    ours = ours.to(DEV)
    edge_index, n = base.GRAPHS[graph]()
    x = base.features(n, dtype)
    xp = x.clone().requires_grad_()
    xo = x.to(DEV).requires_grad_()
    want = pyg(xp, edge_index)
    got = ours(xo, edge_index.to(DEV))
    close(got, want, dtype)
    dy = torch.randn(want.shape, dtype=dtype, generator=torch.Generator().manual_seed(7))
    (want * dy).sum().backward()
    (got * dy.to(DEV)).sum().backward()
    close(xo.grad, xp.grad, dtype)
    ours_p = dict(ours.named_parameters())
    for name, p in pyg.named_parameters():
        if p.grad is not None:
            close(ours_p[name].grad, p.grad, dtype)

def test_cuda_two_layer_gat_trains_under_compile():
    torch.manual_seed(0)
    edge_index, n = base.random_graph(60, 300)
    edge_index = edge_index.to(DEV)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = gnnc.nn.GATConv(base.IN, 4, heads=2, dropout=0.5)
            self.c2 = gnnc.nn.GATConv(8, 3, heads=1, concat=False, dropout=0.5)

        def forward(self, x, ei):
            return self.c2(torch.nn.functional.elu(self.c1(x, ei)), ei)

    import gnnc.nn  # noqa: F401
    model = Net().to(DEV)
    compiled = torch.compile(model, fullgraph=True)
    x = torch.randn(60, base.IN, device=DEV)
    y = torch.randint(0, 3, (60,), device=DEV)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(compiled(x, edge_index), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
