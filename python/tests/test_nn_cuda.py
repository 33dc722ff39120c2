"""gnnc.nn on CUDA tensors against PyG on the CPU: every layer configuration
of test_nn.py on its four graphs (float32 and float64), outputs and the
gradients of x and every parameter; a 2-layer GAT with attention dropout
trains under torch.compile(fullgraph=True). Skipped without a GPU."""

import warnings

import pytest
import torch
from _parity import train_losses

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

@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("graph", list(base.GRAPHS))
@pytest.mark.parametrize("case", base.EDGE_IDS)
def test_cuda_edge_features_match_pyg(case, graph, dtype):
    spec = base.BY_ID[case]
    ours, pyg = base.make(spec, dtype)
    ours = ours.to(DEV)
    edge_index, n = base.GRAPHS[graph]()
    x = base.features(n, dtype)
    ea = base.edge_features(edge_index.size(1), spec[3].get("edge_dim", base.IN), dtype)
    xp, ep = x.clone().requires_grad_(), ea.clone().requires_grad_()
    xo, eo = x.to(DEV).requires_grad_(), ea.to(DEV).requires_grad_()
    want = pyg(xp, edge_index, ep)
    got = ours(xo, edge_index.to(DEV), eo)
    close(got, want, dtype)
    dy = torch.randn(want.shape, dtype=dtype, generator=torch.Generator().manual_seed(7))
    (want * dy).sum().backward()
    (got * dy.to(DEV)).sum().backward()
    close(xo.grad, xp.grad, dtype)
    if ep.grad is not None:
        close(eo.grad, ep.grad, dtype)
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
    losses = train_losses(model, lambda: compiled(x, edge_index), y, 30)
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("case", ["gcn", "gcn-improved", "sage-mean", "gin", "gat-heads",
                                  "gatv2", "transformer", "agnn"])
def test_cuda_sparse_adjacency_matches_pyg(case, layout):
    import warnings
    dtype = torch.float64
    ours, pyg = base.make(base.BY_ID[case], dtype)
    ours = ours.to(DEV)
    edge_index, n = base.random_graph()
    adj = base.adjacency(edge_index, n, layout, dtype, True)
    x = base.features(n, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = pyg(x, adj)
    adj = adj.to(DEV)
    got = ours(x.to(DEV), adj)
    close(got, want, dtype)
    # The second call finds the cached graph (the same edge_index).
    from gnnc.nn import _common
    e1, _ = _common.check_inputs("t", got, adj, None, None)
    close(ours(x.to(DEV), adj), want, dtype)
    e2, _ = _common.check_inputs("t", got, adj, None, None)
    assert e1 is e2


# --------------------------------------------------------------------------
# torch.compile(mode="reduce-overhead"): the step replays CUDA graphs that
# hold gnnc's kernels; the graph lookup runs outside them on every step.


def _two_layer(kind):
    import gnnc.nn  # noqa: F401

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            if kind == "gcn":
                self.c1 = gnnc.nn.GCNConv(base.IN, 16)
                self.c2 = gnnc.nn.GCNConv(16, 3)
            else:
                self.c1 = gnnc.nn.GATConv(base.IN, 4, heads=2)
                self.c2 = gnnc.nn.GATConv(8, 3, heads=1, concat=False)

        def forward(self, x, ei):
            return self.c2(torch.nn.functional.elu(self.c1(x, ei)), ei)
    return Net


@pytest.mark.parametrize("kind", ["gcn", "gat"])
def test_cuda_reduce_overhead_trains_like_eager(kind):
    from torch._dynamo.utils import counters
    torch._dynamo.reset()
    counters.clear()
    edge_index, n = base.random_graph(60, 300)
    edge_index = edge_index.to(DEV)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(n, base.IN, generator=gen).to(DEV)
    y = torch.randint(0, 3, (n,), generator=gen).to(DEV)
    torch.manual_seed(0)
    eager = _two_layer(kind)().to(DEV)
    captured = _two_layer(kind)().to(DEV)
    captured.load_state_dict(eager.state_dict())
    compiled = torch.compile(captured, fullgraph=True, mode="reduce-overhead")
    runs = {}
    for name, model, params in (("eager", eager, eager), ("compiled", compiled, captured)):
        opt = torch.optim.SGD(params.parameters(), lr=0.1)
        losses = []
        for _ in range(8):
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(x, edge_index), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        runs[name] = losses
    torch.testing.assert_close(torch.tensor(runs["compiled"]),
                               torch.tensor(runs["eager"]), rtol=1e-4, atol=1e-5)
    # The steps really were CUDA graphs: nothing made inductor skip them.
    assert not counters["inductor"]["cudagraph_skips"], dict(counters["inductor"])


def test_cuda_reduce_overhead_new_or_changed_graph():
    """Replays never return another graph's values: a new edge_index of the
    same shape gets CUDA graphs of its own (its handle is an integer input,
    which CUDA-graph trees key their recordings on); a write to the captured
    edge_index that its version counter misses makes the replay's results NaN
    and the next call raise."""
    torch._dynamo.reset()
    a, n = base.random_graph(60, 300)
    b = a.clone()
    b[1] = (b[1] + 1) % n  # same shape, other edges
    a, b = a.to(DEV), b.to(DEV)
    x = torch.randn(n, base.IN, device=DEV)
    torch.manual_seed(0)
    model = _two_layer("gcn")().to(DEV)
    with torch.no_grad():
        want_a, want_b = model(x, a), model(x, b)
    assert not torch.allclose(want_a, want_b)
    compiled = torch.compile(model, fullgraph=True, mode="reduce-overhead")
    try:
        with torch.no_grad():
            for _ in range(4):  # warm-up, recording, replays
                got = compiled(x, a).clone()
            torch.testing.assert_close(got, want_a, rtol=1e-4, atol=1e-4)
            for _ in range(3):
                torch.testing.assert_close(compiled(x, b).clone(), want_b,
                                           rtol=1e-4, atol=1e-4)
                torch.testing.assert_close(compiled(x, a).clone(), want_a,
                                           rtol=1e-4, atol=1e-4)
            a.data[1, :10] = (a[1, :10] + 1) % n  # unseen by the counter
            if not _stale_or_nan(lambda: compiled(x, a).clone()):
                torch.cuda.synchronize()
                with pytest.raises(RuntimeError, match="version counter"):
                    compiled(x, a)
            want = model(x, a)
            torch.testing.assert_close(compiled(x, a).clone(), want,
                                       rtol=1e-4, atol=1e-4)
    finally:
        torch._dynamo.reset()


# --------------------------------------------------------------------------
# The per-call path of a cached graph: no synchronisation, and a write the
# version counter misses is still caught (on the device).

from test_reliability import SPMM_SUM, spmm_sum  # noqa: E402


def _off_boundary(t):
    """A contiguous copy of `t` that starts one element past a 16-byte
    boundary: a view into a larger buffer, as `buf[1:].view(...)` makes."""
    buf = torch.empty(t.numel() + 1, dtype=t.dtype, device=t.device)
    view = buf[1:].view(t.shape)
    view.copy_(t)
    assert view.is_contiguous() and view.data_ptr() % 16 != 0
    return view


@pytest.mark.parametrize("variant", ["x", "edge_index"])
@pytest.mark.parametrize("case", base.IDS)
def test_cuda_views_off_a_16_byte_boundary(case, variant):
    # The kernels read rows as 16-byte vectors: a view starting elsewhere
    # is copied by the op, not read misaligned (a sticky CUDA error that
    # ended the process, 11 of these cases before the fix).
    ours, _ = base.make(base.BY_ID[case], torch.float32)
    ours = ours.to(DEV)
    edge_index, n = base.GRAPHS["random"]()
    edge_index = edge_index.to(DEV)
    x = base.features(n, torch.float32).to(DEV)

    def run(xx, ei):
        xx = xx.detach().requires_grad_()
        ours.zero_grad(set_to_none=True)
        y = ours(xx, ei)
        y.square().sum().backward()
        return [y.detach(), xx.grad] + [p.grad for p in ours.parameters() if p.grad is not None]

    want = run(x, edge_index)
    got = run(_off_boundary(x), edge_index) if variant == "x" else \
        run(x, _off_boundary(edge_index))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)


def test_cuda_cached_calls_do_not_synchronise():
    torch.manual_seed(0)
    edge_index, n = base.random_graph(60, 300)
    edge_index = edge_index.to(DEV)
    x = torch.randn(n, base.IN, device=DEV)
    ea = torch.randn(edge_index.size(1), 3, device=DEV)
    layers = [gnnc.nn.GCNConv(base.IN, 8), gnnc.nn.SAGEConv(base.IN, 8),
              gnnc.nn.GATConv(base.IN, 4, heads=2), gnnc.nn.GINConv(base.mlp(base.IN, 8)),
              gnnc.nn.GINEConv(base.mlp(base.IN, 8), edge_dim=3),
              gnnc.nn.GCN(base.IN, 8, 2)]  # (the whole model: one function, planned)
    layers = [l.to(DEV) for l in layers]

    def call(l):
        return l(x, edge_index, ea) if isinstance(l, gnnc.nn.GINEConv) else l(x, edge_index)
    for l in layers:  # builds the graphs and compiles (synchronises)
        call(l).sum().backward()
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(3):
            for l in layers:
                call(l).sum().backward()
            with torch.no_grad():
                for l in layers:
                    call(l)
    finally:
        torch.cuda.set_sync_debug_mode("default")


def _same_then_step(ours, pyg, got, want, xo, xp) -> None:
    """The plan tests' step: gnnc's output `got` (on CUDA, from `xo`) equal
    to PyG's `want` (on the CPU, from `xp`), then the gradients of x and of
    every parameter; then the same descent step on both models' parameters,
    in place, and the gradients cleared."""
    close(got, want, torch.float32)
    want.square().sum().backward()
    got.square().sum().backward()
    close(xo.grad, xp.grad, torch.float32)
    ours_p = dict(ours.named_parameters())
    for name, p in pyg.named_parameters():
        close(ours_p[name].grad, p.grad, torch.float32)
        with torch.no_grad():  # the same step on both, in place
            p.sub_(0.1 * p.grad)
            ours_p[name].copy_(p)
        p.grad = ours_p[name].grad = None


@pytest.mark.parametrize("kind", ["gin", "gin-mlp", "gine", "gcn", "gcn-weighted", "sage",
                                  "gat", "gatv2", "transformer", "agnn"])
def test_cuda_layer_plans_match_pyg(kind):
    """GIN's (nn a Sequential or PyG's MLP), GINE's, GCN's, SAGE's, GAT's,
    GATv2's, TransformerConv's and
    AGNNConv's calls after the first (their plans: conv._GinPlan,
    conv._GcnPlan, conv._SagePlan, attention._GatPlan, attention._Gatv2Plan,
    attention._TransformerPlan, conv._AgnnPlan) on CUDA, new features each
    call, the weights changed between calls and the graph written in place
    once, equal PyG's on the CPU, outputs and every gradient."""
    if kind in ("gcn", "gcn-weighted"):
        case = ("gcn", "GCNConv", (base.IN, base.OUT), {})
    elif kind == "sage":
        case = ("sage", "SAGEConv", (base.IN, base.OUT), {})
    elif kind in ("gat", "gatv2"):
        case = (kind, "GATConv" if kind == "gat" else "GATv2Conv", (base.IN, base.OUT),
                dict(heads=2))
    elif kind == "transformer":
        case = (kind, "TransformerConv", (base.IN, base.OUT), dict(heads=2))
    elif kind == "agnn":
        case = (kind, "AGNNConv", (), {})
    else:
        kw = dict(nn=lambda: base.mlp(base.IN, base.OUT), eps=0.1, train_eps=True)
        if kind == "gine":
            kw["edge_dim"] = 3
        if kind == "gin-mlp":
            from torch_geometric.nn.models import MLP
            kw["nn"] = lambda: MLP([base.IN, 5, base.OUT], norm=None)
        case = (kind, "GINEConv" if kind == "gine" else "GINConv", (), kw)
    ours, pyg = base.make(case, torch.float32)
    ours = ours.to(DEV)
    edge_index, n = base.tiny_graph()
    on_device = edge_index.to(DEV)
    ea = torch.randn(edge_index.size(1), 3)
    for step in range(4):
        if step == 3:
            # (through PyTorch: the version counter moves)
            edge_index[1, 0] = 6
            on_device[1, 0] = 6
        x = base.features(n, torch.float32, seed=step)
        xp, xo = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
        extra = ((ea,), (ea.to(DEV),)) if kind == "gine" else ((), ())
        if kind == "gcn-weighted":  # (new weights each call, a gradient)
            w = torch.rand(edge_index.size(1), generator=torch.Generator().manual_seed(step))
            extra = ((w,), (w.to(DEV),))
        want, got = pyg(xp, edge_index, *extra[0]), ours(xo, on_device, *extra[1])
        assert ours.__dict__.get("_gnnc_plan") is not None  # (the next call's)
        _same_then_step(ours, pyg, got, want, xo, xp)


def test_cuda_weighted_gcn_with_repeated_self_loops_matches_pyg():
    """GCNConv with edge weights on a graph whose nodes carry several
    self-loops of different weights: PyG keeps the last loop's weight (its
    index assignment on the CPU); gnnc's loop weights came from an
    index_put with the node repeated, and on CUDA another loop's weight
    won (0.22 off in session 71). Outputs and the weights' gradient, the
    full path and the plan."""
    torch.manual_seed(0)
    n = 6
    loops = torch.tensor([[2] * 40 + [4] * 7, [2] * 40 + [4] * 7])
    ring = torch.tensor([[0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 0]])
    edge_index = torch.cat([ring, loops, ring.flip(0)], 1)
    ours, pyg = base.make(("gcn", "GCNConv", (base.IN, base.OUT), {}), torch.float32)
    ours = ours.to(DEV)
    on_device = edge_index.to(DEV)
    for step in range(2):
        x = base.features(n, torch.float32, seed=step)
        w = torch.rand(edge_index.size(1), generator=torch.Generator().manual_seed(step))
        wp, wo = w.clone().requires_grad_(), w.to(DEV).requires_grad_()
        want, got = pyg(x, edge_index, wp), ours(x.to(DEV), on_device, wo)
        close(got, want, torch.float32)
        want.square().sum().backward()
        got.square().sum().backward()
        close(wo.grad, wp.grad, torch.float32)


def test_cuda_model_plan_matches_pyg():
    """models.GCN's calls after the first (models._GcnModelPlan) on CUDA,
    new features each call, the weights changed between calls, the graph
    written in place once, and a graph with self-loops (masked rather than
    folded) on the last call: PyG's models.GCN on the CPU, outputs and
    every gradient."""
    pyg_models = pytest.importorskip("torch_geometric.nn.models")
    torch.manual_seed(0)
    pyg = pyg_models.GCN(base.IN, 6, 2, base.OUT)
    ours = gnnc.nn.GCN(base.IN, 6, 2, base.OUT)
    ours.load_state_dict(pyg.state_dict())
    ours = ours.to(DEV)
    edge_index, n = base.loop_free_graph(n=7, e=20)
    on_device = edge_index.to(DEV)
    for step in range(5):
        if step == 3:
            # (through PyTorch: the version counter moves)
            edge_index[1, 0] = (int(edge_index[1, 0]) + 1) % n
            on_device[1, 0] = edge_index[1, 0]
        if step == 4:
            edge_index, n = base.tiny_graph()
            on_device = edge_index.to(DEV)
        x = base.features(n, torch.float32, seed=step)
        xp, xo = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
        want, got = pyg(xp, edge_index), ours(xo, on_device)
        assert ours.__dict__.get("_gnnc_plan") is not None  # (the next call's)
        _same_then_step(ours, pyg, got, want, xo, xp)


def _sync_warnings(call) -> int:
    """The synchronising PyTorch operations `call` runs (the runtime's own
    read back of a graph build is not one of them)."""
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("warn")
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            call()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    return sum("synchroniz" in str(w.message) for w in seen)


def test_cuda_a_new_graph_synchronises_once():
    # The build checks the ids in the one read back it needs for its
    # statistics: no Python range check beside it. A layer that adds
    # self-loops reads its graph's id range and loop flag back once.
    torch.manual_seed(0)
    x = torch.randn(60, base.IN, device=DEV)
    sage = gnnc.nn.SAGEConv(base.IN, 8).to(DEV)
    gat = gnnc.nn.GATConv(base.IN, 4, heads=2).to(DEV)
    for layer in (sage, gat):  # compiles
        layer(x, base.random_graph(60, 300)[0].to(DEV))
    for edges in (301, 302):  # new sizes: no cached graph to compare with
        ei = base.random_graph(60, edges)[0].to(DEV)
        assert _sync_warnings(lambda: sage(x, ei)) == 0
        ei = base.random_graph(60, edges + 10)[0].to(DEV)
        assert _sync_warnings(lambda: gat(x, ei)) == 1
    with pytest.raises(ValueError, match="node id 60, outside"):
        sage(x, torch.tensor([[0, 60], [1, 2]], device=DEV))


def test_cuda_a_new_bipartite_graph_synchronises_once():
    # A bipartite graph's sides are checked by the build itself, in its one
    # read back (the runtime's, not counted here): no PyTorch read back for
    # a separate id check; an id out of its side's range is still a
    # ValueError naming the side.
    torch.manual_seed(0)
    xs, xd = torch.randn(50, base.IN, device=DEV), torch.randn(20, base.IN, device=DEV)
    sage = gnnc.nn.SAGEConv((base.IN, base.IN), 8).to(DEV)

    def edges(e):
        return torch.stack([torch.randint(0, 50, (e,)), torch.randint(0, 20, (e,))]).to(DEV)

    sage((xs, xd), edges(300))  # compiles
    for e in (301, 302):
        ei = edges(e)
        assert _sync_warnings(lambda: sage((xs, xd), ei)) == 0
    with pytest.raises(ValueError, match="destination id 20, outside"):
        sage((xs, xd), torch.tensor([[0, 1], [1, 20]], device=DEV))
    with pytest.raises(ValueError, match="source id 50, outside"):
        sage((xs, xd), torch.tensor([[50, 1], [1, 2]], device=DEV))


def test_cuda_a_new_coo_adjacency_synchronises_once():
    # A new COO adjacency is read back once: its order check and, where it
    # is not sorted and unique, the count of its distinct entries (the
    # keys sorted on the device before the read), together; the graph
    # build's own read back is the runtime's (not counted). A call on the
    # cached graph does not synchronise. gnnc read the count again
    # (torch.unique) after the order check: two.
    torch.manual_seed(0)
    n = 60
    x = torch.randn(n, base.IN, device=DEV)
    sage = gnnc.nn.SAGEConv(base.IN, 8, aggr="sum").to(DEV)

    def adjacency(e, kind):
        index = torch.randint(0, n, (2, e))
        if kind != "repeated":
            index = torch.sparse_coo_tensor(index, torch.ones(e), (n, n)).coalesce().indices()
            if kind == "unsorted":
                index = index[:, torch.randperm(index.size(1))]
        else:
            index = torch.cat([index, index[:, :20]], dim=1)
            index = index[:, torch.randperm(index.size(1))]
        return torch.sparse_coo_tensor(index, torch.rand(index.size(1)), (n, n)).to(DEV)

    for kind in ("sorted", "repeated"):  # compiles
        sage(x, adjacency(300, kind))
    for e, kind in ((301, "sorted"), (302, "unsorted"), (303, "repeated")):
        adj = adjacency(e, kind)
        assert _sync_warnings(lambda: sage(x, adj)) == 1, kind
        assert _sync_warnings(lambda: sage(x, adj)) == 0, kind
        torch.testing.assert_close(sage(x, adj), sage(x, adj.coalesce()),
                                   rtol=1e-5, atol=1e-5)


def test_cuda_targets_sorted_hint_checked_and_used():
    """An edge_index marked sorted by target (a sampled batch's, a CSR
    adjacency's) is its own CSR: the same results, and csr_order; a wrong
    mark (an unsorted tensor) is caught by the build, which sorts."""
    from gnnc import _core
    torch.manual_seed(0)
    ei, n = base.random_graph(80, 600)
    order = torch.argsort(ei[1], stable=True)
    x = torch.randn(n, base.IN, device=DEV)
    sage = gnnc.nn.SAGEConv(base.IN, 8).to(DEV)
    for edges, sorted_ in ((ei[:, order], True), (ei, False)):
        plain = edges.clone().to(DEV)
        marked = _core._mark_dst_sorted(edges.clone().to(DEV))
        torch.testing.assert_close(sage(x, marked), sage(x, plain))
        stats = _core._graphs.get(marked, n).statistics
        assert stats["csr_order"] == sorted_
    # A CSR adjacency's edges are marked; a CSC one's (column-major) are not.
    adj = torch.sparse_coo_tensor(ei.flip(0), torch.rand(ei.size(1)),
                                  (n, n)).coalesce().to(DEV)
    torch.testing.assert_close(sage(x, adj.to_sparse_csr()), sage(x, adj.to_sparse_csc()),
                               rtol=1e-5, atol=1e-5)


def test_cuda_write_behind_the_version_counter_is_caught():
    fn = gnnc.compile(SPMM_SUM)
    ei = torch.tensor([[0, 1, 2], [1, 2, 0]], device=DEV)
    x = torch.randn(3, 4, device=DEV)
    torch.testing.assert_close(fn(ei, x, num_nodes=3), spmm_sum(ei, x))
    version = ei._version
    ei.data[1, 0] = 2  # edge 0 -> 1 becomes 0 -> 2, unseen by the counter
    assert ei._version == version
    # The call runs before the device's check is read: its results are NaN,
    # never the old graph's values; the next call raises.
    assert torch.isnan(fn(ei, x, num_nodes=3)).all()
    torch.cuda.synchronize()
    with pytest.raises(RuntimeError, match="version counter"):
        fn(ei, x, num_nodes=3)
    torch.testing.assert_close(fn(ei, x, num_nodes=3), spmm_sum(ei, x))


def test_cuda_a_lookup_whose_op_does_not_follow_still_checks():
    # A lookup defers its device compare to the op that follows on its
    # graph (TorchOps.cpp PendingCheck); where none follows, the thread's
    # next lookup (here another graph's) launches it on its own first, so
    # the write is still caught.
    from gnnc import _core
    fn = gnnc.compile(SPMM_SUM)
    ei = torch.tensor([[0, 1, 2], [1, 2, 0]], device=DEV)
    other = torch.tensor([[0, 2], [2, 1]], device=DEV)
    x = torch.randn(3, 4, device=DEV)
    fn(ei, x, num_nodes=3)
    fn(other, x, num_nodes=3)
    ei.data[1, 0] = 2  # unseen by the version counter
    _core._graphs.get(ei, 3)  # the lookup alone: its compare is deferred
    torch.testing.assert_close(fn(other, x, num_nodes=3), spmm_sum(other, x))
    torch.cuda.synchronize()
    with pytest.raises(RuntimeError, match="version counter"):
        fn(ei, x, num_nodes=3)
    torch.testing.assert_close(fn(ei, x, num_nodes=3), spmm_sum(ei, x))


def _stale_or_nan(call):
    """A call after a write the version counter missed: it raises the
    stale-graph error (the device's check was already read) or returns NaN
    (it ran before); True if it raised."""
    try:
        out = call()
    except RuntimeError as e:
        assert "version counter" in str(e)
        return True
    assert torch.isnan(out).all()
    return False


def test_cuda_layer_write_behind_the_version_counter_is_caught():
    # GCNConv derives a graph with self-loops from edge_index (gnnc's own
    # tensor): the check of the input covers the derived graph's calls.
    torch.manual_seed(0)
    edge_index, n = base.random_graph(60, 300)
    edge_index = edge_index.to(DEV)
    x = torch.randn(n, base.IN, device=DEV)
    conv = gnnc.nn.GCNConv(base.IN, 8).to(DEV)
    before = conv(x, edge_index)
    edge_index.data[0, :10] = (edge_index[0, :10] + 1) % n
    if not _stale_or_nan(lambda: conv(x, edge_index)):
        torch.cuda.synchronize()
        with pytest.raises(RuntimeError, match="version counter"):
            conv(x, edge_index)
    after = conv(x, edge_index)
    assert torch.isfinite(after).all() and not torch.equal(after, before)


def test_cuda_relations_written_behind_the_version_counter_are_caught():
    # RGCNConv's graph and rows are derived from edge_index and edge_type
    # together: a write to edge_type the counter misses poisons the call on
    # their graph (NaN) or raises, then everything is derived anew.
    torch.manual_seed(0)
    edge_index, n = base.random_graph(60, 300)
    edge_index = edge_index.to(DEV)
    edge_type = torch.randint(0, 4, (edge_index.size(1),), device=DEV)
    x = torch.randn(n, base.IN, device=DEV)
    conv = gnnc.nn.RGCNConv(base.IN, 8, 4).to(DEV)
    before = conv(x, edge_index, edge_type)
    edge_type.data[:20] = (edge_type[:20] + 1) % 4
    if not _stale_or_nan(lambda: conv(x, edge_index, edge_type)):
        torch.cuda.synchronize()
        with pytest.raises(RuntimeError, match="version counter"):
            conv(x, edge_index, edge_type)
    after = conv(x, edge_index, edge_type)
    torch.testing.assert_close(after, conv(x, edge_index.clone(), edge_type.clone()))
    assert not torch.equal(after, before)


def test_cuda_process_exits_cleanly_after_layer_calls():
    # The last lookup's deferred compare keeps its tensors (_core._PENDING)
    # until the thread's next gnnc call; at exit they must go before the
    # module's globals, or the graph cache's weakref callbacks fail then
    # ("Exception ignored in ... drop", seen in session 46's GPU run).
    import subprocess
    import sys
    code = ("import torch, gnnc.nn\n"
            "ei = torch.randint(0, 50, (2, 300), device='cuda')\n"
            "x = torch.randn(50, 8, device='cuda')\n"
            "conv = gnnc.nn.GCNConv(8, 4).cuda()\n"
            "for _ in range(3):\n"
            "    conv(x, ei).sum().backward()\n"
            "torch.cuda.synchronize()\n"
            "print('ok')\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr[-3000:]
    assert "Exception ignored" not in p.stderr, p.stderr[-3000:]


_SECOND_GPU = r'''
import torch, gnnc.nn
g = torch.Generator().manual_seed(0)
x, ei = torch.randn(50, 8, generator=g), torch.randint(0, 50, (2, 300), generator=g)
conv = gnnc.nn.GATConv(8, 4, heads=2)
xr = x.clone().requires_grad_()
want = conv(xr, ei)
want.sum().backward()
ref = xr.grad
dev = torch.device("cuda", 1)
conv = conv.to(dev)
xd = x.to(dev).requires_grad_()
got = conv(xd, ei.to(dev))
got.sum().backward()
assert torch.cuda.current_device() == 0, "gnnc changed the current device"
torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-5)
torch.testing.assert_close(xd.grad.cpu(), ref, rtol=1e-4, atol=1e-5)
try:
    conv.to("cuda:0")(x.cuda(0), ei.cuda(0))
except RuntimeError as e:
    assert "one CUDA device per process" in str(e) and "is cuda:1" in str(e), e
else:
    raise AssertionError("a second device was accepted")
print("second gpu ok")
'''


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_cuda_a_process_on_the_second_gpu():
    """gnnc runs on the device of the first CUDA tensor it is given (here
    cuda:1, in a fresh process: this one's device is chosen already), leaves
    the caller's current device as it was, and refuses a second device with
    an error naming both (before, every kernel ran on cuda:0's context: an
    illegal address on cuda:1, found under DDP)."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
        os.path.dirname(os.path.dirname(gnnc.__file__)), os.environ.get("PYTHONPATH")])))
    env.pop("GNNC_DEVICE", None)
    out = subprocess.run([sys.executable, "-c", _SECOND_GPU], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0 and "second gpu ok" in out.stdout, out.stderr[-3000:]


def test_cuda_graphs_built_under_a_side_stream():
    """Graph builds (their temporaries and structures allocated in the order
    of the stream they run on) under torch.cuda.stream(s) give the results
    of builds on the default stream, graph after graph (the pool reusing
    blocks the earlier graphs freed)."""
    torch.manual_seed(0)
    conv = gnnc.nn.GCNConv(16, 8).to(DEV)
    x = torch.randn(2000, 16, device=DEV)
    side = torch.cuda.Stream()
    for k in range(6):
        ei = torch.randint(0, 2000, (2, 20000 + 997 * k), device=DEV)
        want = conv(x, ei.clone())
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            got = conv(x, ei.clone())
        torch.cuda.current_stream().wait_stream(side)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
        del want, got, ei
