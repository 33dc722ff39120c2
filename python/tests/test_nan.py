"""NaN and inf as PyTorch/PyG have them (docs/Reliability.md, "NaN and inf").

The eight gnnc.nn layers against PyG's on a small graph (an isolated node, a
node with three incoming edges): NaN and +-inf placed in x, in the edge
features where the layer has them, in a whole softmax/max group and in one
entry of a group. The outputs and the gradients of x, the edge features and
every parameter must have PyG's NaN and inf masks (and the same signs of
infinities), and the finite values must be close. On the CPU (the reference
evaluator) and, where a GPU is usable, on CUDA.
"""

import warnings

import pytest
import torch

import _parity

try:
    import gnnc
    import gnnc.nn as gnn
except ImportError as e:  # the native core is not built here
    pytest.skip(f"gnnc is not importable: {e}", allow_module_level=True)
pyg_nn = pytest.importorskip("torch_geometric.nn", reason="torch_geometric is not installed")

warnings.filterwarnings("ignore", category=FutureWarning)

NAN, INF = float("nan"), float("inf")
IN, OUT = 4, 3


def mlp(i, o):
    return torch.nn.Sequential(torch.nn.Linear(i, 5), torch.nn.ReLU(), torch.nn.Linear(5, o))


# (class, args, kwargs). SAGE with out >= in aggregates before its linear
# layer, as PyG does (see test_sage_project_first_reassociates_infinities).
LAYERS = {
    "gcn": ("GCNConv", (IN, OUT), {}),
    "sage-mean": ("SAGEConv", (IN, IN + 1), {}),
    "sage-max": ("SAGEConv", (IN, OUT), dict(aggr="max")),
    "gin": ("GINConv", (), dict(nn=lambda: mlp(IN, OUT))),
    "gat": ("GATConv", (IN, OUT), dict(heads=2, edge_dim=2)),
    "gatv2": ("GATv2Conv", (IN, OUT), dict(heads=2, edge_dim=2)),
    "transformer": ("TransformerConv", (IN, OUT), dict(heads=2, edge_dim=2)),
    "agnn": ("AGNNConv", (), {}),
}

# 6 nodes, node 5 isolated; node 1 <- 0, 2, 3 (edges 0-2); node 2 <- 0, 1.
EDGE_INDEX = torch.tensor([[0, 2, 3, 0, 1, 4, 2, 1], [1, 1, 1, 2, 2, 3, 4, 0]])

# Where the bad values go: (name, tensor ("x" or "ea"), rows, column, value).
PLACEMENTS = [
    ("x-nan", "x", [2], 1, NAN),
    ("x-inf", "x", [3], 0, INF),
    ("x-ninf", "x", [0], 2, -INF),
    ("x-group-nan", "x", [0, 2, 3], None, NAN),  # every source of node 1
    ("ea-nan", "ea", [1], 0, NAN),
    ("ea-inf", "ea", [2], 1, INF),
    ("ea-ninf", "ea", [2], 1, -INF),
    ("ea-group-nan", "ea", [0, 1, 2], 0, NAN),  # node 1's whole softmax group
    ("ea-group-inf", "ea", [0, 1, 2], 0, INF),
    ("ea-group-ninf", "ea", [0, 1, 2], 0, -INF),
]


def make(name, dtype):
    cls, args, kw = LAYERS[name]
    ours_kw, pyg_kw = _parity.split_nn(kw)
    torch.manual_seed(0)
    pyg = getattr(pyg_nn, cls)(*args, **pyg_kw)
    ours = getattr(gnn, cls)(*args, **ours_kw)
    ours.load_state_dict(pyg.state_dict())
    return ours.to(dtype), pyg.to(dtype)


def inputs(placement, dtype):
    _, where, rows, col, value = placement
    g = torch.Generator().manual_seed(3)
    x = torch.randn(6, IN, generator=g, dtype=torch.float64)
    ea = torch.randn(EDGE_INDEX.size(1), 2, generator=g, dtype=torch.float64)
    t = x if where == "x" else ea
    if col is None:
        t[rows] = value
    else:
        t[rows, col] = value
    return x.to(dtype), ea.to(dtype)


def run(layer, x, ea, edge, device):
    """Output and gradients (x, edge features, parameters) of one pass with a
    fixed output gradient."""
    layer = layer.to(device)
    x = x.to(device).requires_grad_()
    e = ea.to(device).requires_grad_() if edge else None
    out = layer(x, EDGE_INDEX.to(device), e) if edge else layer(x, EDGE_INDEX.to(device))
    dy = torch.linspace(-1, 1.3, out.numel(), dtype=out.dtype).view(out.shape)
    out.backward(dy.to(device))
    grads = {"x": x.grad}
    if edge:
        grads["edge_attr"] = e.grad
    for n, p in layer.named_parameters():
        grads[n] = p.grad
    return out.detach().cpu(), {k: (v.cpu() if v is not None else None) for k, v in grads.items()}


def assert_same_pattern(got, want, what, tol):
    assert got.shape == want.shape, what
    assert torch.equal(got.isnan(), want.isnan()), (
        f"{what}: NaN where gnnc {got.isnan().nonzero().tolist()} vs PyG "
        f"{want.isnan().nonzero().tolist()}")
    assert torch.equal(got.isinf(), want.isinf()), f"{what}: inf mask differs"
    inf = want.isinf()
    assert torch.equal(got[inf], want[inf]), f"{what}: signs of infinities differ"
    finite = want.isfinite()
    torch.testing.assert_close(got[finite], want[finite], **tol, msg=what)


def check(name, placement, dtype, device):
    edge = "edge_dim" in LAYERS[name][2]
    if placement[1] == "ea" and not edge:
        pytest.skip("the layer has no edge features")
    ours, pyg = make(name, dtype)
    x, ea = inputs(placement, dtype)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=1e-9, atol=1e-9)
    out1, g1 = run(ours, x, ea, edge, device)
    out2, g2 = run(pyg, x, ea, edge, "cpu")
    assert_same_pattern(out1, out2, "output", tol)
    for k, want in g2.items():
        got = g1.get(k)
        if want is None:
            assert got is None or not got.any(), k
        else:
            assert got is not None, k
            assert_same_pattern(got, want, f"gradient of {k}", tol)


DTYPES = [torch.float32, torch.float64]


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("placement", PLACEMENTS, ids=[p[0] for p in PLACEMENTS])
@pytest.mark.parametrize("name", list(LAYERS))
def test_nan_inf_match_pyg_cpu(name, placement, dtype):
    check(name, placement, dtype, "cpu")


def gpu():
    return torch.cuda.is_available() and gnnc.cuda_available()


@pytest.mark.skipif(not gpu(), reason="no usable GPU")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("placement", PLACEMENTS, ids=[p[0] for p in PLACEMENTS])
@pytest.mark.parametrize("name", list(LAYERS))
def test_nan_inf_match_pyg_cuda(name, placement, dtype):
    check(name, placement, dtype, "cuda")


def test_sage_project_first_reassociates_infinities():
    """The documented limit: SAGEConv (sum/mean) with out_channels <
    in_channels applies lin_l before the aggregation (fewer features over the
    edges). NaN propagates as in PyG, but sums of infinities of both signs
    reassociate: PyG's lin_l.weight gradient has inf - inf = NaN where
    gnnc's has an infinity."""
    ours, pyg = make("sage-mean", torch.float64)
    ours, pyg = (getattr(m, "__class__")(IN, OUT).double() for m in (ours, pyg))
    ours.load_state_dict(pyg.state_dict())
    x, ea = inputs(PLACEMENTS[2], torch.float64)  # x-ninf
    out1, g1 = run(ours, x, ea, False, "cpu")
    out2, g2 = run(pyg, x, ea, False, "cpu")
    assert torch.equal(out1.isnan(), out2.isnan())
    assert torch.equal(g1["x"].isnan(), g2["x"].isnan())
    w1, w2 = g1["lin_l.weight"], g2["lin_l.weight"]
    assert (w1.isnan() | w1.isinf()).equal(w2.isnan() | w2.isinf())


# Layers whose weight meets the features before the aggregation (PyG's
# order for GCN, GAT, Transformer; gnnc's own choice, fewer features over the
# edges, for SAGE sum/mean and GIN with out < in) and the weight made
# non-finite: (class, args, kwargs, parameter).
WEIGHTS = {
    "sage-mean": ("SAGEConv", (IN, OUT), {}, "lin_l.weight"),
    "sage-sum-alone": ("SAGEConv", (IN, OUT), dict(aggr="sum", root_weight=False, bias=False),
                       "lin_l.weight"),
    "sage-no-root": ("SAGEConv", (IN, OUT), dict(root_weight=False), "lin_l.weight"),
    "sage-project": ("SAGEConv", (IN, OUT), dict(project=True), "lin_l.weight"),
    "sage-bipartite": ("SAGEConv", ((IN, IN), OUT), {}, "lin_l.weight"),
    "gcn-no-loops": ("GCNConv", (IN, OUT), dict(add_self_loops=False), "lin.weight"),
    "gin-project-first": ("GINConv", (), dict(nn=lambda: torch.nn.Sequential(
        torch.nn.Linear(IN, 2), torch.nn.ReLU(), torch.nn.Linear(2, OUT))), "nn.0.weight"),
    "gat-no-loops": ("GATConv", (IN, OUT), dict(heads=2, add_self_loops=False), "lin.weight"),
    "transformer": ("TransformerConv", (IN, OUT), dict(heads=2), "lin_value.weight"),
}


@pytest.mark.parametrize("bad", [NAN, INF, -INF], ids=["nan", "inf", "ninf"])
@pytest.mark.parametrize("name", list(WEIGHTS))
def test_non_finite_weight_reaches_nodes_without_in_edges(name, bad):
    """A NaN or an infinity in the projection's weight: PyG's node without
    in-edges (node 5) gets `0 @ W^T`, NaN in the columns that weight feeds,
    also where gnnc projects before aggregating (SAGE, a `zl` term in its
    function). NaN: PyG's NaN masks of the output and of every gradient.
    An infinity: the output non-finite where PyG's is (PyG's rows with
    in-edges hold +-inf there where gnnc's, projected first and offset by
    `zl`, hold NaN; GIN's ReLU after a reassociated sum is the documented
    limit, test_sage_project_first_reassociates_infinities)."""
    cls, args, kw, param = WEIGHTS[name]
    ours_kw, pyg_kw = _parity.split_nn(kw)
    torch.manual_seed(0)
    pyg = getattr(pyg_nn, cls)(*args, **pyg_kw).double()
    ours = getattr(gnn, cls)(*args, **ours_kw).double()
    ours.load_state_dict(pyg.state_dict())
    for layer in (ours, pyg):
        with torch.no_grad():
            dict(layer.named_parameters())[param][0, 1] = bad
    x, _ = inputs(("none", "x", [], 0, 0.0), torch.float64)
    results = []
    for layer in (ours, pyg):
        xl = x.clone().requires_grad_()
        out = layer((xl, xl) if name.endswith("bipartite") else xl, EDGE_INDEX)
        dy = torch.linspace(-1, 1.3, out.numel(), dtype=out.dtype).view(out.shape)
        out.backward(dy)
        grads = {"x": xl.grad, **{n: p.grad for n, p in layer.named_parameters()}}
        results.append((out.detach(), grads))
    (out1, g1), (out2, g2) = results
    first = name.startswith(("sage", "gin"))  # gnnc projects first, PyG after
    if name.startswith("sage"):
        assert not out2[5].isfinite().all()  # PyG's 0 @ W^T on node 5
    tol = dict(rtol=1e-9, atol=1e-9)
    if bad != bad:
        assert_same_pattern(out1, out2, "output", tol)
        for k, want in g2.items():
            if k == "x" and first:
                # The documented limit: projected first, the backward's
                # 0 @ W gives the x gradient NaN on nodes without
                # out-edges (node 5), PyG's is finite there.
                assert torch.equal(g1[k].isnan()[:5], want.isnan()[:5])
                continue
            assert_same_pattern(g1[k], want, f"gradient of {k}", tol)
    elif not name.startswith("gin"):
        assert torch.equal(out1.isfinite(), out2.isfinite())


def test_softmax_group_all_nan_gives_nan_weights():
    """The issue's case: an all-NaN softmax group gives NaN weights (not 0),
    and its node's aggregate is NaN as in PyG."""
    f = gnnc.compile("""func.func @att(%g: !gnn.graph, %s: tensor<?x1xf64> {gnn.domain = "edge"}, %h: tensor<?x1x1xf64>) -> tensor<?x1x1xf64> {
  %w = gnn.edge_softmax %g, %s : tensor<?x1xf64>
  %r = gnn.spmm sum %g, %h weights(%w : tensor<?x1xf64>) : tensor<?x1x1xf64> -> tensor<?x1x1xf64>
  return %r : tensor<?x1x1xf64>
}""")
    ei = torch.tensor([[0, 1, 2], [2, 2, 1]])
    h = torch.tensor([1., 10., 100.], dtype=torch.float64).view(3, 1, 1)
    for s, want in [([0., 0., NAN], [0., NAN, 5.5]), ([0., 0., -INF], [0., NAN, 5.5]),
                    ([NAN, 1., 0.], [0., 100., NAN]), ([INF, 0., 0.], [0., 100., NAN])]:
        got = f(ei, torch.tensor(s, dtype=torch.float64).view(3, 1), h, num_nodes=3).view(-1)
        want = torch.tensor(want, dtype=torch.float64)
        assert torch.equal(got.isnan(), want.isnan()), (s, got)
        torch.testing.assert_close(got[~want.isnan()], want[~want.isnan()])



# %s = %a through a max over one self-loop per node (exact, signs kept), so
# that the rows are the graph's nodes (what the CUDA backend groups by).
MINMAX_IR = """
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @minmax(%g: !gnn.graph, %a: tensor<?x4x{t}>, %b: tensor<?x4x{t}>)
    -> (tensor<?x4x{t}>, tensor<?x4x{t}>) {{
  %s = gnn.spmm max %g, %a : tensor<?x4x{t}> -> tensor<?x4x{t}>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x4x{t}>
  %e = tensor.empty(%n) : tensor<?x4x{t}>
  %hi = linalg.generic {{indexing_maps = [#id, #id, #id],
                        iterator_types = ["parallel", "parallel"]}}
      ins(%s, %b : tensor<?x4x{t}>, tensor<?x4x{t}>) outs(%e : tensor<?x4x{t}>) {{
  ^bb0(%x: {t}, %y: {t}, %o: {t}):
    %m = arith.maximumf %x, %y : {t}
    linalg.yield %m : {t}
  }} -> tensor<?x4x{t}>
  %e2 = tensor.empty(%n) : tensor<?x4x{t}>
  %lo = linalg.generic {{indexing_maps = [#id, #id, #id],
                        iterator_types = ["parallel", "parallel"]}}
      ins(%s, %b : tensor<?x4x{t}>, tensor<?x4x{t}>) outs(%e2 : tensor<?x4x{t}>) {{
  ^bb0(%x: {t}, %y: {t}, %o: {t}):
    %l = arith.minimumf %x, %y : {t}
    linalg.yield %l : {t}
  }} -> tensor<?x4x{t}>
  return %hi, %lo : tensor<?x4x{t}>, tensor<?x4x{t}>
}}
"""


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not gpu(), reason="no usable GPU"))])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_maximumf_minimumf_order_signed_zeros(device, dtype):
    """arith.maximumf / minimumf take -0.0 < +0.0 in either operand order
    (MLIR's semantics): the GPU's max.NaN / min.NaN and the reference agree
    bit for bit."""
    t = "f32" if dtype == torch.float32 else "f64"
    fn = gnnc.compile(MINMAX_IR.format(t=t))
    ei = torch.zeros(2, 1, dtype=torch.int64, device=device)  # 0 -> 0
    a = torch.tensor([[0.0, -0.0, 0.0, -0.0]], dtype=dtype, device=device)
    b = torch.tensor([[-0.0, 0.0, 0.0, -0.0]], dtype=dtype, device=device)
    hi, lo = (r.cpu() for r in fn(ei, a, b, num_nodes=1))
    assert hi.eq(0).all() and lo.eq(0).all()
    assert torch.signbit(hi).tolist() == [[False, False, False, True]]
    assert torch.signbit(lo).tolist() == [[True, True, False, True]]


@pytest.mark.parametrize("cls", ["GATConv", "GATv2Conv"])
@pytest.mark.parametrize("fill_value", ["mean", "mul", "max", 0.5])
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_features_of_a_dropped_self_loop_reach_no_gradient(cls, fill_value, bad):
    # The layer drops the input's self-loops (as PyG, before lin_edge): a NaN
    # or inf on such an edge's features reaches neither the output nor any
    # gradient (it made lin_edge's and att's gradients NaN: 0 * inf).
    torch.manual_seed(0)
    pyg = getattr(pyg_nn, cls)(4, 3, heads=2, edge_dim=2, fill_value=fill_value)
    ours = getattr(gnn, cls)(4, 3, heads=2, edge_dim=2, fill_value=fill_value)
    ours.load_state_dict(pyg.state_dict())
    x = torch.randn(4, 4)
    ei = torch.tensor([[0, 1, 2, 3, 0], [1, 2, 3, 3, 3]])  # 3 -> 3: a self-loop
    ea = torch.randn(5, 2)
    ea[3, 0] = bad
    results = []
    for layer in (pyg, ours):
        xi, ej = x.clone().requires_grad_(), ea.clone().requires_grad_()
        y = layer(xi, ei, ej)
        y.sum().backward()
        grads = {k: p.grad for k, p in layer.named_parameters()}
        results.append((y, xi.grad, ej.grad, grads))
        layer.zero_grad()
    (yp, xp, ep, gp), (yo, xo, eo, go) = results
    assert torch.isfinite(yp).all() and torch.isfinite(yo).all()
    torch.testing.assert_close(yo, yp, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(xo, xp, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(eo, ep, rtol=1e-5, atol=1e-5)
    for k in gp:
        assert torch.isfinite(go[k]).all(), k
        torch.testing.assert_close(go[k], gp[k], rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------
# A NaN output gradient through a ReLU or torch.where: the masked branch
# gets exactly 0 (PyTorch's where/relu backward), not 0 * NaN.


def _nan_rows_backward(layer, x, edge_index, rows):
    """Output and gradients (x, every parameter) for a random output gradient
    that is NaN on `rows`."""
    x = x.clone().requires_grad_()
    out = layer(x, edge_index)
    dy = torch.randn(out.shape, generator=torch.Generator().manual_seed(5),
                     dtype=out.dtype)
    dy[rows] = NAN
    out.backward(dy)
    grads = {"x": x.grad}
    grads.update((n, p.grad) for n, p in layer.named_parameters())
    return out.detach(), grads


def _same_masked_gradients(ours, pyg, x, edge_index, rows):
    tol = dict(rtol=1e-10, atol=1e-10)
    out1, g1 = _nan_rows_backward(ours, x, edge_index, rows)
    out2, g2 = _nan_rows_backward(pyg, x, edge_index, rows)
    assert_same_pattern(out1, out2, "output", tol)
    assert list(g1) == list(g2)
    for k, want in g2.items():
        assert_same_pattern(g1[k], want, f"gradient of {k}", tol)
    return g2


def test_nan_output_gradient_gin_folded_relu():
    """GINConv folds its MLP's leading Linear and ReLU into the gnn function:
    a NaN row of dy reaches the hidden units the ReLU zeroed as 0 (the first
    Linear's gradients finite there, as PyG's), not as 0 * NaN."""
    ours, pyg = make("gin", torch.float64)
    x = torch.randn(6, IN, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    want = _same_masked_gradients(ours, pyg, x, EDGE_INDEX, [1, 4])
    # The case has a unit the ReLU zeroes on every NaN row: PyG's first
    # Linear's weight gradient is finite on its row (NaN elsewhere).
    w = want["nn.0.weight"]
    assert w.isnan().any() and w.isfinite().all(1).any()


def test_nan_output_gradient_gcn_model_relu():
    """gnnc.nn.models.GCN folds the ReLU between its layers into the first
    layer's gnn function: NaN rows of dy, spread over their neighbours by the
    second layer's backward, reach the hidden units the ReLU zeroed as 0."""
    from torch_geometric.nn import models as pyg_models
    torch.manual_seed(0)
    pyg = pyg_models.GCN(IN, 8, 2, OUT)
    ours = gnn.models.GCN(IN, 8, 2, OUT)
    ours, pyg = _parity.same_weights(ours, pyg, torch.float64)
    x = torch.randn(6, IN, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    want = _same_masked_gradients(ours, pyg, x, EDGE_INDEX, [3])
    w = want["convs.0.lin.weight"]
    assert w.isnan().any() and w.isfinite().all(1).any()


class _WhereMessages:
    """sum_j where(x_j > x_i, x_j * w, 0): the unselected edges' inputs get
    no gradient from a NaN dy of their destination."""

    def __init__(self):
        super().__init__(aggr="sum")
        self.w = torch.nn.Parameter(torch.linspace(-1.0, 1.5, IN, dtype=torch.float64))

    def forward(self, x, edge_index):
        return self.propagate(edge_index, x=x)

    def message(self, x_i, x_j):
        return torch.where(x_j > x_i, x_j * self.w, 0.0)


class _GnncWhere(_WhereMessages, gnnc.MessagePassing):
    pass


class _PyGWhere(_WhereMessages, pyg_nn.MessagePassing):
    pass


def test_nan_output_gradient_message_passing_where():
    """A torch.where in a traced message(): with dy NaN at node 1 (three
    incoming edges), the sources of its unselected edges get 0 from them,
    as PyG's (and plain PyTorch's) where backward gives."""
    x = torch.randn(6, IN, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    want = _same_masked_gradients(_GnncWhere(), _PyGWhere(), x, EDGE_INDEX, [1])
    assert want["x"].isnan().any() and want["x"].isfinite().any()


class _ReluMessages:
    """sum_j relu(x_j * w) (torch.relu, F.relu or Tensor.relu per
    `how`): relu keeps a NaN (as PyTorch's does), and its gradient passes
    where the input is NaN and is 0 where it is <= 0."""

    def __init__(self, how):
        super().__init__(aggr="sum")
        self.how = how
        self.w = torch.nn.Parameter(torch.linspace(-1.0, 1.5, IN, dtype=torch.float64))

    def forward(self, x, edge_index):
        return self.propagate(edge_index, x=x)

    def message(self, x_j):
        h = x_j * self.w
        if self.how == "torch":
            return torch.relu(h)
        if self.how == "functional":
            return torch.nn.functional.relu(h)
        return h.relu()


class _GnncRelu(_ReluMessages, gnnc.MessagePassing):
    pass


class _PyGRelu(_ReluMessages, pyg_nn.MessagePassing):
    pass


@pytest.mark.parametrize("how", ["torch", "functional", "method"])
def test_traced_relu_keeps_nan_as_pytorch(how):
    """A traced relu of a NaN is NaN, not 0 (gnnc lowered it as
    `select(x > 0, x, 0)` until session 84, which made it 0: node 1's sum
    over a NaN source was finite where PyG's is NaN), and its gradient
    passes at the NaN: the output, x's and w's gradients have PyG's NaN
    masks and values, for a random output gradient and for one NaN on a
    row."""
    x = torch.randn(6, IN, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    x[2, 1] = NAN  # a source of nodes 1 and 4
    x[0, 0] = 0.0  # relu's gradient at 0 is 0 (PyTorch's)
    ours, pyg = _GnncRelu(how), _PyGRelu(how)
    out = ours(x, EDGE_INDEX)
    assert out.isnan().any()
    want = _same_masked_gradients(ours, pyg, x, EDGE_INDEX, [])
    # (the NaN reaches w's gradient through x_j * dy; x's stays finite)
    assert want["w"].isnan().any() and want["x"].isfinite().all()
    _same_masked_gradients(ours, pyg, x, EDGE_INDEX, [3])


class _TwoWhereMessages(_WhereMessages):
    """where(x_j > x_i, h_j, 0) + where(x_j < -x_i, h_j, 0) with h = x * w:
    h_j reaches the message through two selects of different conditions in
    one body (both compare edge values), so an edge where neither takes it
    gives its source exactly 0 from a NaN dy."""

    def message(self, x_i, x_j):
        h = x_j * self.w
        return torch.where(x_j > x_i, h, 0.0) + torch.where(x_j < -x_i, h, 0.0)


class _GnncTwoWhere(_TwoWhereMessages, gnnc.MessagePassing):
    pass


class _PyGTwoWhere(_TwoWhereMessages, pyg_nn.MessagePassing):
    pass


def test_nan_output_gradient_two_wheres_of_different_conditions():
    """Two torch.where of different conditions on one value: where neither
    selects it, the source gets 0 from the NaN dy of node 1 (PyTorch adds
    each where's own gradient, each 0 there), not 0 * NaN + 0 * NaN."""
    x = torch.randn(6, IN, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    want = _same_masked_gradients(_GnncTwoWhere(), _PyGTwoWhere(), x, EDGE_INDEX, [1])
    assert want["x"].isnan().any() and want["x"].isfinite().any()


class _MaskedScores:
    """softmax_i(where(k_j > 0, x_i . x_j, -inf)) v_j: a node whose
    sources all fail the test has an all -inf group, NaN weights (as PyG's),
    and so a NaN gradient of its scores."""

    def __init__(self):
        super().__init__(aggr="sum")

    def forward(self, x, edge_index):
        return self.propagate(edge_index, x=x, k=x[:, :1].detach(), v=x * 0.5)

    def message(self, x_i, x_j, k_j, v_j, index):
        s = torch.where(k_j > 0, (x_i * x_j).sum(-1, keepdim=True), float("-inf"))
        return self.softmax(s, index) * v_j


class _GnncMaskedScores(_MaskedScores, gnnc.MessagePassing):
    softmax = staticmethod(gnnc.softmax)


class _PyGMaskedScores(_MaskedScores, pyg_nn.MessagePassing):
    @staticmethod
    def softmax(s, index):
        from torch_geometric.utils import softmax
        return softmax(s, index)


def test_all_masked_softmax_group_gives_no_nan_to_the_masked_scores():
    """The case docs/Reliability.md named: an all -inf softmax group (every
    score masked by torch.where) has NaN weights and a NaN score gradient;
    the masked branch's inputs get 0 from it, as PyG's (they got NaN)."""
    x = torch.randn(6, IN, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    x[[0, 2, 3], 0] = -1.0  # every source of node 1 masked
    x[[1, 4], 0] = 1.0
    want = _same_masked_gradients(_GnncMaskedScores(), _PyGMaskedScores(), x, EDGE_INDEX, [])
    assert want["x"].isnan().any() and want["x"].isfinite().any()
