"""What the parity tests against PyG share: tolerances, the backward of one
random output gradient, a few training steps."""

import copy

import torch


def tol(dtype):
    return (dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else
            dict(rtol=1e-10, atol=1e-10))


def backward_both(out1, out2, x1, x2, dtype):
    """Backpropagates one random output gradient (seeded) through both
    outputs and checks that the inputs' gradients agree."""
    dy = torch.randn(out2.shape, generator=torch.Generator().manual_seed(3),
                     dtype=torch.float64).to(dtype)
    out1.backward(dy.to(out1.device))
    out2.backward(dy.to(out2.device))
    torch.testing.assert_close(x1.grad, x2.grad, **tol(dtype))


def same_model_gradients(ours, pyg, out, want, x, x_theirs, dtype):
    """gnnc's module `ours` against PyG's `pyg` after a forward each (`out`
    from `x`, `want` from `x_theirs`): parameters named alike, their
    gradients and x's alike (same_gradients), and the state dicts (buffers
    such as BatchNorm's running statistics) alike."""
    mine, theirs = dict(ours.named_parameters()), dict(pyg.named_parameters())
    assert list(mine) == list(theirs)
    same_gradients(out, want, [x] + list(mine.values()), [x_theirs] + list(theirs.values()),
                   dtype)
    for (k, a), b in zip(ours.state_dict().items(), pyg.state_dict().values()):
        torch.testing.assert_close(a, b, **tol(dtype), msg=k)


def same_gradients(out, want, leaves, theirs, dtype):
    """Backpropagates one random output gradient (seeded) through `out`
    (gnnc's) and `want` (PyG's) and checks that the gradients of `leaves`
    and `theirs` agree pairwise; where PyG's is None (unused), gnnc's is
    None or zero."""
    dy = torch.randn(want.shape, generator=torch.Generator().manual_seed(4),
                     dtype=torch.float64).to(dtype).to(want.device)
    for a, b in zip(torch.autograd.grad(out, leaves, dy, allow_unused=True),
                    torch.autograd.grad(want, theirs, dy, allow_unused=True)):
        if b is None:
            assert a is None or not a.any()
        else:
            torch.testing.assert_close(a, b, **tol(dtype))


def train_losses(model, forward, y, steps, lr=0.05):
    """The cross-entropy losses of `steps` Adam steps on `forward()`."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(forward(), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def features(n, dtype, channels, seed=2):
    """Seeded random node features (drawn in float64)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, channels, generator=g, dtype=torch.float64).to(dtype)


def same_weights(ours, pyg, dtype, randomise=lambda name: name.endswith("bias")):
    """PyG's parameters in both models, those `randomise` names drawn
    uniformly in [-0.5, 0.5] first (PyG initialises biases and eps to 0);
    both in `dtype`, in eval mode."""
    with torch.no_grad():
        for name, p in pyg.named_parameters():
            if randomise(name):
                p.uniform_(-0.5, 0.5)
    ours.load_state_dict(pyg.state_dict())
    return ours.to(dtype).eval(), pyg.to(dtype).eval()


def split_nn(kwargs):
    """(gnnc's keywords, PyG's keywords) for one layer: an "nn" factory is
    called once (seed 0) and each layer gets its own copy of the module."""
    kw = dict(kwargs)
    if "nn" not in kw:
        return kw, kw
    torch.manual_seed(0)
    net = kw.pop("nn")()
    return dict(kw, nn=copy.deepcopy(net)), dict(kw, nn=net)


class SparseTensor:
    """The part of torch_sparse.SparseTensor's interface gnnc.nn reads
    (torch_sparse is not installed in CI): coo(), sparse_sizes(), device().
    `sizes` (rows, columns) = (num_dst, num_src) of PyG's adj_t."""

    def __init__(self, row, col, value, sizes):
        self.row, self.col, self.value = row, col, value
        self.sizes = (sizes, sizes) if isinstance(sizes, int) else tuple(sizes)

    def coo(self):
        return self.row, self.col, self.value

    def sparse_sizes(self):
        return self.sizes

    def device(self):
        return self.row.device
