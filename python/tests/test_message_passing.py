"""gnnc.MessagePassing: layers written as PyG MessagePassing subclasses,
traced into gnn functions.

Each layer is compared with the same computation in plain PyTorch or with
PyG's own layer under the same weights; the traced functions are checked
for the fused forms (spmm with weights after edge_softmax, sddmm, no
edge-sized gathers where none are needed); float64 gradcheck covers the
derived backward; refusals name the op and the user's line, and
fallback="torch" runs the same layer unfused. With GNNC_TEST_DEVICE=cuda
the same tests run on CUDA tensors.
"""

import copy
import gc
import inspect
import io
import os
import pickle
import re
import types
import sys
import warnings

import pytest
import torch
import torch.nn.functional as F

gnnc = pytest.importorskip("gnnc")
pyg_nn = pytest.importorskip("torch_geometric.nn", reason="torch_geometric is not installed")

DEVICE = torch.device(os.environ.get("GNNC_TEST_DEVICE", "cpu"))

if DEVICE.type == "cuda" and not (torch.cuda.is_available() and gnnc.cuda_available()):
    pytest.skip("GNNC_TEST_DEVICE=cuda without a usable GPU", allow_module_level=True)

HERE = os.path.abspath(__file__)


def _graph(n=7, seed=0):
    # A duplicate edge (0->1 twice), a self-loop (2->2), an isolated node (5).
    ei = torch.tensor([[0, 0, 2, 3, 2, 4, 1, 6, 3],
                       [1, 1, 2, 1, 0, 3, 4, 3, 6]], device=DEVICE)
    return ei, n


def _scatter(msg, index, n, reduce="sum"):
    out = msg.new_zeros((n,) + tuple(msg.shape[1:]))
    idx = index.view(-1, *([1] * (msg.dim() - 1))).expand_as(msg)
    return out.scatter_reduce(0, idx, msg, reduce, include_self=False)


def _line_of(fn, text):
    """The absolute line number of the line of ``fn`` that contains ``text``."""
    lines, start = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return start + k
    raise AssertionError(f"{text!r} not in {fn.__name__}")


# --------------------------------------------------------------------------
# Layers.

class SumConv(gnnc.MessagePassing):
    """out_i = sum_j x_j (the GCN propagation without weights)."""

    def forward(self, x, edge_index):
        return self.propagate(edge_index, x=x)

    def message(self, x_j):
        return x_j


class WeightedConv(gnnc.MessagePassing):
    """GCNConv(normalize=False, add_self_loops=False): lin, then
    out_i = sum_j w_ji h_j, then bias."""

    def __init__(self, cin, cout, aggr="sum"):
        super().__init__(aggr)
        self.lin = torch.nn.Linear(cin, cout, bias=False)
        self.bias = torch.nn.Parameter(torch.randn(cout))

    def forward(self, x, edge_index, edge_weight):
        h = self.lin(x)
        return self.propagate(edge_index, x=h, edge_weight=edge_weight) + self.bias

    def message(self, x_j, edge_weight):
        return edge_weight.view(-1, 1) * x_j


class GINLike(gnnc.MessagePassing):
    """GINConv: nn((1 + eps) x_i + sum_j x_j), the MLP inside update."""

    def __init__(self, nn, eps=0.0):
        super().__init__("sum")
        self.nn = nn
        self.eps = torch.nn.Parameter(torch.tensor([eps]))

    def forward(self, x, edge_index):
        return self.propagate(edge_index, x=x)

    def update(self, aggr_out, x):
        return self.nn((1 + self.eps) * x + aggr_out)


class GATLike(gnnc.MessagePassing):
    """GATConv(add_self_loops=False)'s attention, written as PyG's message
    with gnnc.softmax."""

    def __init__(self, cin, channels, heads, negative_slope=0.2, dropout=0.0, **kw):
        super().__init__("sum", **kw)
        self.heads, self.channels = heads, channels
        self.negative_slope, self.dropout = negative_slope, dropout
        self.lin = torch.nn.Linear(cin, heads * channels, bias=False)
        self.att_src = torch.nn.Parameter(torch.randn(1, heads, channels))
        self.att_dst = torch.nn.Parameter(torch.randn(1, heads, channels))
        self.bias = torch.nn.Parameter(torch.randn(heads * channels))

    def forward(self, x, edge_index):
        h = self.lin(x).view(-1, self.heads, self.channels)
        return self.propagate(edge_index, x=h) + self.bias

    def message(self, x_i, x_j, index):
        alpha = (x_j * self.att_src).sum(-1) + (x_i * self.att_dst).sum(-1)
        alpha = F.leaky_relu(alpha, self.negative_slope)
        alpha = gnnc.softmax(alpha, index)
        alpha = F.dropout(alpha, p=self.dropout, training=self.training)
        return alpha.unsqueeze(-1) * x_j

    def update(self, aggr_out):
        return aggr_out.view(-1, self.heads * self.channels)


# EdgeConv: max_j nn(cat([x_i, x_j - x_i])), as examples/python/mp_layers.py
# writes it.
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "..", "..", "examples", "python"))
from mp_layers import EdgeConv as EdgeConvLike  # noqa: E402


class ResGatedLike(gnnc.MessagePassing):
    """ResGatedGraphConv, with PyG's own message (sigmoid(k_i + q_j) * v_j)."""

    def __init__(self, cin, cout, edge_dim=None):
        super().__init__("sum")
        self.edge_dim = edge_dim
        self.act = torch.nn.Sigmoid()
        extra = edge_dim or 0
        self.lin_key = torch.nn.Linear(cin + extra, cout)
        self.lin_query = torch.nn.Linear(cin + extra, cout)
        self.lin_value = torch.nn.Linear(cin + extra, cout)
        self.lin_skip = torch.nn.Linear(cin, cout, bias=False)
        self.bias = torch.nn.Parameter(torch.randn(cout))

    message = pyg_nn.ResGatedGraphConv.message

    def forward(self, x, edge_index, edge_attr=None):
        if self.edge_dim is None:
            k, q, v = self.lin_key(x), self.lin_query(x), self.lin_value(x)
        else:
            k = q = v = x
        out = self.propagate(edge_index, k=k, q=q, v=v, edge_attr=edge_attr)
        return out + self.lin_skip(x) + self.bias


def _f64(module):
    return module.to(device=DEVICE, dtype=torch.float64)


# --------------------------------------------------------------------------
# Layers against PyTorch and PyG.

@pytest.mark.parametrize("aggr", ["sum", "mean", "max", "min"])
def test_aggregation_of_source_features(aggr):
    ei, n = _graph()
    layer = SumConv(aggr)
    x = torch.randn(n, 4, dtype=torch.float64, device=DEVICE)
    ref = _scatter(x[ei[0]], ei[1], n, {"sum": "sum", "mean": "mean", "max": "amax",
                                         "min": "amin"}[aggr])
    torch.testing.assert_close(layer(x, ei), ref)
    # x_j alone is one spmm: no gather of x onto the edges.
    text = layer.gnn_ir()
    assert f"gnn.spmm {aggr}" in text and "gnn.gather" not in text


class PairLinear(gnnc.MessagePassing):
    """A message of both ends through one linear map (PNA's pre_nn), any
    aggr; update optional (``mode``: "same" returns aggr_out, "linear"
    maps it, "scaled" doubles it)."""

    def __init__(self, aggr, mode=None, c=3, fallback=None):
        super().__init__(aggr, fallback=fallback)
        self.lin = torch.nn.Linear(2 * c, c)
        self.mode = mode
        k = len(aggr) if isinstance(aggr, list) else 1
        self.post = torch.nn.Linear(k * c, 2)

    def forward(self, x, edge_index):
        return self.propagate(edge_index, x=x)

    def message(self, x_i, x_j):
        return self.lin(torch.cat([x_i, x_j], dim=-1))


class PairLinearUpdate(PairLinear):
    def update(self, aggr_out):
        if self.mode == "same":
            return aggr_out
        if self.mode == "linear":
            return self.post(aggr_out)
        return aggr_out * 2.0


class PyGPairLinear(pyg_nn.MessagePassing):
    def __init__(self, aggr, c=3):
        super().__init__(aggr=aggr)
        self.lin = torch.nn.Linear(2 * c, c)

    def forward(self, x, edge_index):
        return self.propagate(edge_index, x=x)

    def message(self, x_i, x_j):
        return self.lin(torch.cat([x_i, x_j], dim=-1))


_AGGR_LISTS = [["mean", "min", "max", "std"], ["sum", "var"], ["std"], "var",
               ["max", "add", "mean", "std", "var", "min"]]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("aggr", _AGGR_LISTS, ids=str)
def test_a_list_of_aggregations_equals_pyg(aggr, dtype):
    # PyG's MultiAggregation ("cat"): the aggregations of one message side
    # by side, var and std as PyG computes them (node 5 receives no edge).
    ei, n = _graph()
    torch.manual_seed(4)
    ours = PairLinear(aggr).to(device=DEVICE, dtype=dtype)
    theirs = PyGPairLinear(aggr).to(device=DEVICE, dtype=dtype)
    theirs.lin.load_state_dict(ours.lin.state_dict())
    x = torch.randn(n, 3, dtype=dtype, device=DEVICE, requires_grad=True)
    xt = x.detach().clone().requires_grad_()
    got, want = ours(x, ei), theirs(xt, ei)
    # float32: std's sqrt(mean(h*h) - mean(h)^2) cancels; the summation
    # orders differ (as _F32_TOL of test_mp_layers.py).
    tol = {} if dtype == torch.float64 else dict(rtol=1e-3, atol=1e-4)
    torch.testing.assert_close(got, want, **tol)
    dy = torch.randn_like(got)
    gs = torch.autograd.grad(got, [x, ours.lin.weight, ours.lin.bias], dy)
    ws = torch.autograd.grad(want, [xt, theirs.lin.weight, theirs.lin.bias], dy)
    for a, b in zip(gs, ws):
        torch.testing.assert_close(a, b, **tol)
    # One function: every aggregation of the one message, no second trace.
    k = len(aggr) if isinstance(aggr, list) else 1
    assert got.shape == (n, 3 * k)
    assert ours.gnn_ir().count("func.func") == 1


_AGGR_MODULES = {
    "Sum": lambda a: a.SumAggregation(), "Max": lambda a: a.MaxAggregation(),
    "Std": lambda a: a.StdAggregation(),
    "Multi": lambda a: a.MultiAggregation(["mean", a.MinAggregation(), "var"]),
    "list": lambda a: ["sum", a.MaxAggregation()],
}
_AGGR_MODULES_REFUSED = {
    "Softmax": lambda a: a.SoftmaxAggregation(),
    "semi_grad": lambda a: a.VarAggregation(semi_grad=True),
    "Multi_sum": lambda a: a.MultiAggregation(["sum", "max"], mode="sum"),
    "Multi_mul": lambda a: a.MultiAggregation(["sum", "mul"]),
}


@pytest.mark.parametrize("name", list(_AGGR_MODULES) + list(_AGGR_MODULES_REFUSED))
def test_pyg_aggregation_modules(name):
    # PyG's Aggregation modules of gnnc's aggregations (at their defaults,
    # a MultiAggregation of them concatenated) are those aggregations;
    # PyG's others are refused by name (they were a ValueError, "aggr must
    # be one of", as for a wrong value).
    A = pytest.importorskip("torch_geometric.nn.aggr")
    if name in _AGGR_MODULES_REFUSED:
        with pytest.raises(NotImplementedError, match="PyG's.*not supported"):
            PairLinear(_AGGR_MODULES_REFUSED[name](A))
        return
    ei, n = _graph()
    torch.manual_seed(4)
    ours = _f64(PairLinear(_AGGR_MODULES[name](A)))
    theirs = _f64(PyGPairLinear(_AGGR_MODULES[name](A)))
    theirs.lin.load_state_dict(ours.lin.state_dict())
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE, requires_grad=True)
    got, want = ours(x, ei), theirs(x, ei)
    torch.testing.assert_close(got, want)
    dy = torch.randn_like(got)
    torch.testing.assert_close(torch.autograd.grad(got, x, dy),
                               torch.autograd.grad(want, x, dy))


def test_a_list_of_aggregations_gradcheck():
    ei, n = _graph()
    torch.manual_seed(5)
    layer = _f64(PairLinear(["mean", "min", "max", "std", "var", "sum"]))
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: layer(x, ei), (x,))


@pytest.mark.parametrize("mode", ["same", "linear", "scaled"])
def test_a_list_of_aggregations_through_update(mode):
    ei, n = _graph()
    torch.manual_seed(6)
    aggr = ["max", "mean", "std"]
    layer = _f64(PairLinearUpdate(aggr, mode))
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE)
    if mode == "scaled":
        # An elementwise op on the concatenation is not traced: refused
        # at update's line, or run unfused with fallback="torch".
        line = _line_of(PairLinearUpdate.update, "aggr_out * 2.0")
        with pytest.raises(gnnc.TraceError, match=f"mul of aggr_out .*:{line} "):
            layer(x, ei)
        layer = _f64(PairLinearUpdate(aggr, mode, fallback="torch"))
        with pytest.warns(gnnc.FallbackWarning):
            got = layer(x, ei)
    else:
        got = layer(x, ei)
    cat = torch.cat([_pyg_aggr(layer, x, ei, a) for a in aggr], dim=-1)
    want = {"same": cat, "linear": layer.post(cat),
            "scaled": cat * 2.0}[mode]
    torch.testing.assert_close(got, want)


def _pyg_aggr(layer, x, ei, aggr):
    """PyG's aggregation ``aggr`` of ``layer``'s message, in float64."""
    ref = _f64(PyGPairLinear(aggr))
    ref.lin.load_state_dict(layer.lin.state_dict())
    return ref(x, ei)


def test_a_list_of_aggregations_unfused_agrees():
    ei, n = _graph()
    torch.manual_seed(7)
    layer = _f64(PairLinear(["min", "std", "sum"]))
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE)
    torch.testing.assert_close(layer._run_torch(ei, n, {"x": x}), layer(x, ei))


def test_gcn_like_matches_pyg_gcnconv():
    ei, n = _graph()
    torch.manual_seed(0)
    ours = _f64(WeightedConv(5, 3))
    theirs = _f64(pyg_nn.GCNConv(5, 3, normalize=False, add_self_loops=False))
    with torch.no_grad():
        theirs.lin.weight.copy_(ours.lin.weight)
        theirs.bias.copy_(ours.bias)
    x = torch.randn(n, 5, dtype=torch.float64, device=DEVICE)
    w = torch.rand(ei.size(1), dtype=torch.float64, device=DEVICE)
    torch.testing.assert_close(ours(x, ei, w), theirs(x, ei, w))
    # The edge weight times x_j is spmm's weights, not an edge tensor of
    # features.
    text = ours.gnn_ir()
    assert "weights(" in text and "gnn.gather" not in text and "gnn.reduce" not in text
    # The weights want no gradient: their argument is not differentiable
    # (no backward kernels for it).
    assert 'tensor<?xf64> {gnn.domain = "edge"}' in text


def test_gin_like_matches_pyg_ginconv():
    ei, n = _graph()
    torch.manual_seed(1)
    mlp = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    ours = _f64(GINLike(mlp, eps=0.25))
    theirs = _f64(pyg_nn.GINConv(mlp, eps=0.25))
    x = torch.randn(n, 4, dtype=torch.float64, device=DEVICE, requires_grad=True)
    out = ours(x, ei)
    torch.testing.assert_close(out, theirs(x, ei))
    # The MLP runs in the function, after the aggregation.
    text = ours.gnn_ir()
    assert text.count("linalg.matmul") == 2 and "gnn.spmm sum" in text
    (g,) = torch.autograd.grad(out.square().sum(), x)
    x2 = x.detach().clone().requires_grad_()
    (g2,) = torch.autograd.grad(theirs(x2, ei).square().sum(), x2)
    torch.testing.assert_close(g, g2)


def test_gat_like_matches_pyg_gatconv_and_fuses():
    ei, n = _graph()
    torch.manual_seed(2)
    heads, channels = 2, 3
    ours = _f64(GATLike(5, channels, heads))
    theirs = _f64(pyg_nn.GATConv(5, channels, heads=heads, add_self_loops=False))
    with torch.no_grad():
        theirs.lin.weight.copy_(ours.lin.weight)
        theirs.att_src.copy_(ours.att_src)
        theirs.att_dst.copy_(ours.att_dst)
        theirs.bias.copy_(ours.bias)
    x = torch.randn(n, 5, dtype=torch.float64, device=DEVICE)
    out = ours(x, ei)
    torch.testing.assert_close(out, theirs(x, ei))
    # softmax(score) * x_j aggregated by sum: edge_softmax, then spmm with
    # the weights; the scores are one sddmm of per-node dot products. No
    # edge tensor of features is made (no gather, no reduce).
    text = ours.gnn_ir()
    assert "gnn.edge_softmax" in text and "gnn.sddmm add" in text
    assert "weights(" in text
    assert "gnn.gather" not in text and "gnn.reduce" not in text
    # Gradients of the parameters, as PyG's.
    out.square().sum().backward()
    theirs(x, ei).square().sum().backward()
    torch.testing.assert_close(ours.att_src.grad, theirs.att_src.grad)
    torch.testing.assert_close(ours.att_dst.grad, theirs.att_dst.grad)
    torch.testing.assert_close(ours.lin.weight.grad, theirs.lin.weight.grad)


class _GATOnFlat(GATLike):
    """GATLike whose message splits flat node features into heads."""

    def forward(self, x, edge_index):
        return self.propagate(edge_index, x=self.lin(x)) + self.bias

    def message(self, x_i, x_j, index):
        h, c = self.heads, self.channels
        return super().message(x_i.view(-1, h, c), x_j.view(-1, h, c), index)


def _equals_gat_like(cls, seed):
    """A GATLike variant `cls` with GATLike's weights gives GATLike's output;
    returns the variant's traced IR."""
    ei, n = _graph()
    torch.manual_seed(seed)
    layer = _f64(cls(4, 3, 2))
    ref = _f64(GATLike(4, 3, 2))
    ref.load_state_dict(layer.state_dict())
    x = torch.randn(n, 4, dtype=torch.float64, device=DEVICE)
    torch.testing.assert_close(layer(x, ei), ref(x, ei))
    return layer.gnn_ir()


def test_heads_split_inside_the_message():
    # One expand_shape of x serves both ends; still no edge-sized features.
    text = _equals_gat_like(_GATOnFlat, 13)
    assert text.count("tensor.expand_shape") == 1 and "gnn.gather" not in text


class _GATWithPairs(GATLike):
    """GATConv's own split: the per-node scores computed in PyTorch and
    passed as a (source, target) pair, read as alpha_j / alpha_i."""

    def forward(self, x, edge_index):
        h = self.lin(x).view(-1, self.heads, self.channels)
        a_src = (h * self.att_src).sum(-1)
        a_dst = (h * self.att_dst).sum(-1)
        return self.propagate(edge_index, x=(h, h), alpha=(a_src, a_dst)) + self.bias

    def message(self, x_j, alpha_j, alpha_i, index):
        alpha = gnnc.softmax(F.leaky_relu(alpha_j + alpha_i, self.negative_slope), index)
        return alpha.unsqueeze(-1) * x_j


def test_source_target_pairs():
    text = _equals_gat_like(_GATWithPairs, 14)
    assert "gnn.sddmm add" in text and "gnn.gather" not in text
    # x=(h, h): one argument.
    assert text.count("tensor<?x2x3xf64> {gnn.differentiable}") == 1
    ei, n = _graph()
    x = torch.randn(n, 4, dtype=torch.float64, device=DEVICE)
    with pytest.raises(NotImplementedError, match="bipartite"):
        SumConv().propagate(ei, x=(x, x[:3]))


class _GatedMessages:
    """mean_j sigmoid(w_ji) tanh(x_i + x_j): nonlinear in the edge weight,
    so a COO adjacency's duplicate entries count as separate edges (gnnc's
    layer and PyG's share it)."""

    def __init__(self):
        super().__init__(aggr="mean")

    def forward(self, x, edge_index):
        return self.propagate(edge_index, x=x, edge_weight=None)

    def message(self, x_i, x_j, edge_weight):
        return torch.sigmoid(edge_weight).view(-1, 1) * torch.tanh(x_i + x_j)


class _Gated(_GatedMessages, gnnc.MessagePassing):
    pass


class _PyGSum(pyg_nn.MessagePassing):
    def __init__(self):
        super().__init__(aggr="sum")

    def forward(self, x, edge_index):
        return self.propagate(edge_index, x=x)

    def message(self, x_j):
        return x_j


class _PyGGated(_GatedMessages, pyg_nn.MessagePassing):
    pass


def _adjacencies(ei, n, w):
    """PyG's adj_t of (ei, w) in the forms PyG's propagate takes: COO
    (coalesced; unsorted with duplicates, flagged coalesced or not, as PyG's
    to_edge_index leaves them), CSR."""
    coo = torch.sparse_coo_tensor(ei.flip(0), w, (n, n)).coalesce()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's invariant-check notice
        raw = {flag: torch.sparse_coo_tensor(ei.flip(0), w, (n, n), is_coalesced=flag)
               for flag in (True, False)}
    return {"coo": coo, "csr": coo.to_sparse_csr(), "coo-unsorted-flagged": raw[True],
            "coo-unsorted": raw[False]}


@pytest.mark.parametrize("layout", ["coo", "csr", "coo-unsorted-flagged", "coo-unsorted"])
def test_sparse_adjacency_matches_pyg(layout):
    """A layer called with PyG's adj_t gets what PyG's propagate gives it:
    the entries as they are (duplicates separate), the values as
    edge_weight where message takes it and the call passes None; outputs
    and the features' gradients equal PyG's (it was refused)."""
    ei, n = _graph()
    w = torch.rand(ei.size(1), dtype=torch.float64, device=DEVICE) + 0.5
    x = torch.randn(n, 4, dtype=torch.float64, device=DEVICE)
    for ours, theirs in ((_Gated(), _PyGGated()), (SumConv(), _PyGSum())):
        # (PyG's generated propagate refuses an unflagged uncoalesced tensor;
        # it reads the flagged one's entries as they are, as gnnc reads both.)
        adj1 = _adjacencies(ei, n, w)[layout]
        adj2 = _adjacencies(ei, n, w)[layout.replace("unsorted", "unsorted-flagged")
                                      if layout == "coo-unsorted" else layout]
        x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
        got = ours(x1, adj1)
        want = theirs(x2, adj2)
        torch.testing.assert_close(got, want)
        dy = torch.randn_like(want)
        torch.testing.assert_close(torch.autograd.grad(got, x1, dy)[0],
                                   torch.autograd.grad(want, x2, dy)[0])
    if layout == "coo":
        # A torch_sparse.SparseTensor (the tests' stand-in): the same entries.
        import _parity
        coo = _adjacencies(ei, n, w)["coo"]
        st = _parity.SparseTensor(*coo.indices(), coo.values(), n)
        torch.testing.assert_close(_Gated()(x, st), _PyGGated()(x, coo))
    adj = _adjacencies(ei, n, w)["csr"]
    with pytest.raises(ValueError, match="target_to_source"):
        SumConv(flow="target_to_source")(x, adj)
    with pytest.raises(NotImplementedError, match=r"non-square adjacency \[7, 8\]"):
        SumConv()(x, torch.sparse_coo_tensor(ei.flip(0), w, (n, n + 1)))


def test_message_and_aggregate_with_a_sparse_adjacency_is_refused():
    # PyG calls message_and_aggregate for a sparse adjacency; gnnc ran
    # message (here x_j, unweighted) and answered another sum than PyG's
    # weighted spmm. Refused; a [2, E] edge_index still runs message, as
    # PyG does.
    from torch_geometric.utils import spmm

    def make(base):
        class Fused(base):
            def forward(self, x, edge_index):
                return self.propagate(edge_index, x=x)

            def message_and_aggregate(self, adj_t, x):
                return spmm(adj_t, x, reduce=self.aggr)
        return Fused()

    ei, n = _graph()
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE)
    w = torch.rand(ei.size(1), dtype=torch.float64, device=DEVICE)
    for adj in _adjacencies(ei, n, w).values():
        with pytest.raises(NotImplementedError,
                           match="Fused defines message_and_aggregate, which PyG calls"):
            make(gnnc.MessagePassing)(x, adj)
    torch.testing.assert_close(make(gnnc.MessagePassing)(x, ei),
                               make(pyg_nn.MessagePassing)(x, ei))


def test_edgeconv_matches_pyg_edgeconv():
    ei, n = _graph()
    torch.manual_seed(3)
    lin = torch.nn.Linear(2 * 4, 3)
    ours = _f64(EdgeConvLike(lin))
    theirs = _f64(pyg_nn.EdgeConv(lin, aggr="max"))
    x = torch.randn(n, 4, dtype=torch.float64, device=DEVICE)
    torch.testing.assert_close(ours(x, ei), theirs(x, ei))
    # cat([x_i, x_j - x_i]) @ W is x_i @ W1 + x_j @ W2 - x_i @ W2, multiplied
    # per node: the matmuls run on node tensors, the edges see one sddmm.
    text = ours.gnn_ir()
    assert "gnn.sddmm" in text and "gnn.reduce max" in text


def test_edgeconv_with_an_mlp_matches_pyg():
    ei, n = _graph()
    torch.manual_seed(4)
    mlp = torch.nn.Sequential(torch.nn.Linear(2 * 4, 6), torch.nn.ReLU(),
                              torch.nn.Linear(6, 3))
    ours = _f64(EdgeConvLike(mlp, aggr="mean"))
    theirs = _f64(pyg_nn.EdgeConv(mlp, aggr="mean"))
    x = torch.randn(n, 4, dtype=torch.float64, device=DEVICE)
    torch.testing.assert_close(ours(x, ei), theirs(x, ei))


@pytest.mark.parametrize("edge_dim", [None, 2])
def test_resgated_matches_pyg(edge_dim):
    ei, n = _graph()
    torch.manual_seed(5)
    ours = _f64(ResGatedLike(4, 3, edge_dim))
    theirs = _f64(pyg_nn.ResGatedGraphConv(4, 3, edge_dim=edge_dim))
    with torch.no_grad():
        for name in ("lin_key", "lin_query", "lin_value"):
            getattr(theirs, name).weight.copy_(getattr(ours, name).weight)
            getattr(theirs, name).bias.copy_(getattr(ours, name).bias)
        theirs.lin_skip.weight.copy_(ours.lin_skip.weight)
        theirs.bias.copy_(ours.bias)
    x = torch.randn(n, 4, dtype=torch.float64, device=DEVICE)
    ea = None if edge_dim is None else torch.randn(ei.size(1), edge_dim,
                                                   dtype=torch.float64, device=DEVICE)
    torch.testing.assert_close(ours(x, ei, ea), theirs(x, ei, ea))
    if edge_dim is None:
        # k_i + q_j is one sddmm add.
        assert "gnn.sddmm add" in ours.gnn_ir()


def test_target_to_source_flow():
    ei, n = _graph()
    layer = SumConv("sum", flow="target_to_source")
    x = torch.randn(n, 2, dtype=torch.float64, device=DEVICE)
    torch.testing.assert_close(layer(x, ei), _scatter(x[ei[1]], ei[0], n))


# --------------------------------------------------------------------------
# Gradients.

class _AttentionOf(gnnc.MessagePassing):
    """Attention whose vectors are plain tensors the test swaps in."""

    def __init__(self, heads, channels):
        super().__init__("sum")
        self.heads, self.channels = heads, channels

    def message(self, x_i, x_j, index, edge_attr):
        alpha = (x_j * self.att_src).sum(-1) + (x_i * self.att_dst).sum(-1) + edge_attr
        alpha = gnnc.softmax(F.leaky_relu(alpha, 0.2), index)
        return alpha.unsqueeze(-1) * torch.tanh(x_j)


def test_gradcheck_weighted_sum():
    ei, n = _graph()
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE, requires_grad=True)
    w = torch.rand(ei.size(1), dtype=torch.float64, device=DEVICE, requires_grad=True)

    class Weighted(gnnc.MessagePassing):
        def message(self, x_j, edge_weight):
            return edge_weight.view(-1, 1) * x_j

    lay = Weighted("mean")
    assert torch.autograd.gradcheck(
        lambda x, w: lay.propagate(ei, x=x, edge_weight=w), (x, w))


def test_gradcheck_attention():
    ei, n = _graph()
    heads, channels = 2, 3
    layer = _AttentionOf(heads, channels)
    x = torch.randn(n, heads, channels, dtype=torch.float64, device=DEVICE,
                    requires_grad=True)
    a_s = torch.randn(1, heads, channels, dtype=torch.float64, device=DEVICE,
                      requires_grad=True)
    a_d = torch.randn(1, heads, channels, dtype=torch.float64, device=DEVICE,
                      requires_grad=True)
    ea = torch.randn(ei.size(1), heads, dtype=torch.float64, device=DEVICE,
                     requires_grad=True)

    def fn(x, a_s, a_d, ea):
        layer.att_src, layer.att_dst = a_s, a_d
        return layer.propagate(ei, x=x, edge_attr=ea)

    assert torch.autograd.gradcheck(fn, (x, a_s, a_d, ea))


def test_gradcheck_gin_like():
    ei, n = _graph()
    torch.manual_seed(6)
    mlp = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    layer = _f64(GINLike(mlp))
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE, requires_grad=True)
    # nn.Tanh goes through torch.tanh; gradients reach x and the MLP.
    assert torch.autograd.gradcheck(lambda x: layer(x, ei), (x,))
    layer(x, ei).sum().backward()
    assert mlp[0].weight.grad is not None and layer.eps.grad is not None


# --------------------------------------------------------------------------
# Caching: one compile per configuration, current parameter values.

def test_compiles_once_and_reads_current_parameters():
    from gnnc import _message_passing as mp
    ei, n = _graph()
    torch.manual_seed(7)
    layer = _f64(GATLike(4, 2, 2))
    x = torch.randn(n, 4, dtype=torch.float64, device=DEVICE)
    first = layer(x, ei)
    size = len(mp._COMPILED)
    with torch.no_grad():
        layer.att_src.mul_(-2.0)
    second = layer(x, ei)
    assert len(mp._COMPILED) == size
    assert not torch.allclose(first, second)
    # Another feature size is another configuration.
    layer2 = _f64(GATLike(4, 5, 2))
    layer2(x, ei)
    assert len(mp._COMPILED) == size + 1


def test_dropout_follows_training_mode():
    ei, n = _graph()
    torch.manual_seed(8)
    layer = _f64(GATLike(4, 2, 2, dropout=1.0))
    x = torch.randn(n, 4, dtype=torch.float64, device=DEVICE)
    layer.train()
    torch.testing.assert_close(layer(x, ei), layer.bias.expand(n, 4))
    layer.eval()
    assert not torch.allclose(layer(x, ei), layer.bias.expand(n, 4))


# --------------------------------------------------------------------------
# Refusals and the unfused path.

class UsesSin(gnnc.MessagePassing):
    def message(self, x_j):
        return torch.sin(x_j)


class Branches(gnnc.MessagePassing):
    def message(self, x_i, x_j):
        if (x_j - x_i).sum(-1) > 0:
            return x_j
        return x_i


class UsesPygSoftmax(gnnc.MessagePassing):
    def message(self, x_i, x_j, index):
        from torch_geometric.utils import softmax
        return softmax((x_i * x_j).sum(-1), index).unsqueeze(-1) * x_j


def test_unsupported_op_names_op_and_line():
    ei, n = _graph()
    x = torch.randn(n, 2, dtype=torch.float64, device=DEVICE)
    with pytest.raises(gnnc.TraceError) as info:
        UsesSin().propagate(ei, x=x)
    message = str(info.value)
    assert "torch.sin" in message
    assert f"{HERE}:{_line_of(UsesSin.message, 'torch.sin')}" in message
    assert 'fallback="torch"' in message
    assert isinstance(info.value, TypeError)


def test_bool_of_a_traced_tensor_is_refused():
    ei, n = _graph()
    x = torch.randn(n, 2, dtype=torch.float64, device=DEVICE)
    with pytest.raises(gnnc.TraceError, match=r"bool\(\) of a traced tensor") as info:
        Branches().propagate(ei, x=x)
    assert f"{HERE}:{_line_of(Branches.message, 'if (x_j')}" in str(info.value)


class _Operators(gnnc.MessagePassing):
    def __init__(self, op, **kwargs):
        super().__init__(**kwargs)
        self.op = op

    def message(self, x_j):
        if self.op == "&":
            return torch.where((x_j > 0) & (x_j < 1), x_j, -x_j)
        if self.op == "|":
            return torch.where((x_j > 0) | (x_j < -1), x_j, -x_j)
        if self.op == "//":
            return x_j // 2
        if self.op == "%":
            return x_j % 2
        if self.op == "~":
            return torch.where(~(x_j > 0), x_j, -x_j)
        return 2 ** x_j


@pytest.mark.parametrize("op", ["&", "|", "//", "%", "~", "**"])
def test_unsupported_operators_are_trace_errors(op):
    # They raised Python's bare TypeError (no line, no op), which
    # fallback="torch" did not catch.
    ei, n = _graph()
    x = torch.randn(n, 2, dtype=torch.float64, device=DEVICE)
    with pytest.raises(gnnc.TraceError, match=f"the operator {re.escape(op)}") as info:
        _Operators(op).propagate(ei, x=x)
    assert f"{HERE}:" in str(info.value)
    with pytest.warns(gnnc.FallbackWarning):
        out = _Operators(op, fallback="torch").propagate(ei, x=x)
    torch.testing.assert_close(out, _scatter(_Operators(op).message(x[ei[0]]), ei[1], n))


class _NoSelfLoops(gnnc.MessagePassing):
    """PyG's self-loop mask in message: x_j + x_i where the edge is no loop."""

    def __init__(self, **kwargs):
        super().__init__(node_dim=0, **kwargs)

    def message(self, x_j, x_i, edge_index_i, edge_index_j):
        return (x_j + x_i) * (edge_index_i != edge_index_j)


def test_edge_index_compared_is_a_trace_error():
    # `!=` of the index proxies compared their identities: the mask traced
    # as `(x_j + x_i) * True`, the loop's message kept (a silently wrong
    # sum). Now refused at the line, and fallback="torch" computes PyG's
    # answer.
    ei, n = _graph()
    x = torch.randn(n, dtype=torch.float64, device=DEVICE)
    with pytest.raises(gnnc.TraceError, match="an edge index used as a value") as info:
        _NoSelfLoops().propagate(ei, x=x)
    assert f"{HERE}:{_line_of(_NoSelfLoops.message, 'edge_index_i !=')}" in str(info.value)
    keep = ei[0] != ei[1]
    with pytest.warns(gnnc.FallbackWarning):
        out = _NoSelfLoops(fallback="torch").propagate(ei, x=x)
    torch.testing.assert_close(out, _scatter((x[ei[0]] + x[ei[1]]) * keep, ei[1], n))

    # Unpacked, edge_index's rows are still gnnc.softmax's index.
    class Unpacked(gnnc.MessagePassing):
        def message(self, x_j, x_i, edge_index):
            src, dst = edge_index
            return gnnc.softmax((x_j * x_i).sum(-1), dst).unsqueeze(-1) * x_j

    x = torch.randn(n, 2, dtype=torch.float64, device=DEVICE)
    s = (x[ei[0]] * x[ei[1]]).sum(-1).exp()
    a = s / _scatter(s, ei[1], n)[ei[1]]
    torch.testing.assert_close(Unpacked().propagate(ei, x=x),
                               _scatter(a.unsqueeze(-1) * x[ei[0]], ei[1], n))


def test_pyg_softmax_points_to_gnnc_softmax():
    ei, n = _graph()
    x = torch.randn(n, 2, dtype=torch.float64, device=DEVICE)
    with pytest.raises(gnnc.TraceError, match="use gnnc.softmax"):
        UsesPygSoftmax().propagate(ei, x=x)


def test_shapes_refused():
    ei, n = _graph()

    class Mismatch(gnnc.MessagePassing):
        def message(self, x_j, edge_attr):
            return edge_attr * x_j  # [E, H] * [E, H, C]: ranks differ

    x = torch.randn(n, 2, 3, dtype=torch.float64, device=DEVICE)
    ea = torch.randn(ei.size(1), 2, dtype=torch.float64, device=DEVICE)
    with pytest.raises(gnnc.TraceError, match="unsqueeze"):
        Mismatch().propagate(ei, x=x, edge_attr=ea)

    class Matmul3d(gnnc.MessagePassing):
        def message(self, x_j):
            return x_j @ torch.ones(3, 3, dtype=torch.float64, device=DEVICE)

    with pytest.raises(gnnc.TraceError, match=r"matmul.*only \[rows, features\]"):
        Matmul3d().propagate(ei, x=x)

    class RowSum(gnnc.MessagePassing):
        def message(self, x_j):
            return x_j.sum(0)

    with pytest.raises(gnnc.TraceError, match="reduces over the rows"):
        RowSum().propagate(ei, x=x)


def test_fallback_torch_runs_unfused_and_agrees():
    ei, n = _graph()
    x = torch.randn(n, 2, dtype=torch.float64, device=DEVICE)
    layer = UsesSin(fallback="torch")
    with pytest.warns(gnnc.FallbackWarning, match="torch.sin"):
        out = layer.propagate(ei, x=x)
    torch.testing.assert_close(out, _scatter(torch.sin(x[ei[0]]), ei[1], n))
    with warnings.catch_warnings():  # once per configuration
        warnings.simplefilter("error")
        layer.propagate(ei, x=x)
    # A traceable layer gives the same result through both paths.
    torch.manual_seed(9)
    traced = _f64(GATLike(4, 2, 2))
    x4 = torch.randn(n, 4, dtype=torch.float64, device=DEVICE)
    fused = traced(x4, ei)
    unfused = traced._run_torch(ei, n, {"x": traced.lin(x4).view(-1, 2, 2)}) + traced.bias
    torch.testing.assert_close(fused, unfused)


def test_gnn_ir_before_a_call():
    with pytest.raises(RuntimeError, match="call the layer first"):
        SumConv().gnn_ir()


SOURCE_SPMM = """
func.func @f(%g: !gnn.graph, %x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %r = gnn.spmm sum %g, %x : tensor<?x4xf32> -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
"""


def test_explain_shows_the_kernel_groups_and_schedules():
    """gnnc.explain(layer): the last compiled call's function, its training
    forward and backward, one fused attention group in the forward (no
    E x F tensor between kernels), schedules for the graph passed."""
    ei, n = _graph()
    layer = MyGAT(4, 3, 2).to(DEVICE)
    with pytest.raises(ValueError, match="call the layer first"):
        gnnc.explain(layer)
    x = torch.randn(n, 4, device=DEVICE, requires_grad=True)
    layer(x, ei).sum().backward()
    found = gnnc.explain(layer)
    assert [f["role"] for f in found.functions] == ["function", "training forward",
                                                    "backward"]
    forward = found.functions[0]
    attention = [g for g in forward["groups"] if g["family"] == "attention"]
    assert len(attention) == 1
    assert attention[0]["ops"] == ["gnn.sddmm add", "linalg.generic", "gnn.edge_softmax",
                                   "gnn.spmm sum"]
    assert "mapping = row_parallel" in attention[0]["schedule"]
    assert found.stats == "" and "default statistics" in str(found)
    # A heavy row (one destination with most of the edges) makes the
    # schedule split it; the statistics come from the graph passed.
    star = torch.stack([torch.arange(1, 4001), torch.zeros(4000, dtype=torch.long)])
    heavy = gnnc.explain(layer, star.to(DEVICE), num_nodes=4001)
    assert "edges:4000" in heavy.stats and "max-in:4000" in heavy.stats
    split = [g for g in heavy.functions[0]["groups"] if g["family"] == "attention"]
    assert "split = 0" not in split[0]["schedule"]
    assert "attention_0" in str(heavy) and "gnn.edge_softmax" in str(heavy)


def test_explain_a_builtin_layer():
    """A gnnc.nn layer remembers the function it ran last; a MessagePassing
    layer holding one as a submodule stays keyed (what the built-in layer
    notes is not part of its configuration)."""
    import gnnc.nn
    ei, n = _graph()
    conv = gnnc.nn.GATv2Conv(4, 3, heads=2).to(DEVICE)
    with pytest.raises(ValueError, match="call the layer first"):
        gnnc.explain(conv)
    x = torch.randn(n, 4, device=DEVICE)
    conv(x, ei)
    attention = gnnc.explain(conv).functions[0]["groups"]
    # The projections are GEMMs (no group); the bias joins the heads'
    # concatenation in an elementwise group after the attention.
    assert [g["family"] for g in attention] == ["attention", "elementwise"]
    assert "gnn.edge_softmax" in attention[0]["ops"]

    class Outer(SumConv):
        def __init__(self):
            super().__init__()
            self.inner = gnnc.nn.GINConv(torch.nn.Identity())

        def forward(self, x, edge_index):
            return self.propagate(edge_index, x=self.inner(x, edge_index))

    outer = Outer().to(DEVICE)
    outer(x, ei)
    outer(x, ei)
    assert outer._uncached is None and len(outer._mp.parts) == 1


def test_explain_errors():
    with pytest.raises(TypeError, match="gnnc.Function, a gnnc.nn layer"):
        gnnc.explain(torch.nn.Linear(2, 2))
    fn = gnnc.compile(SOURCE_SPMM)
    with pytest.raises(TypeError, match="num_nodes"):
        gnnc.explain(fn, _graph()[0])
    with pytest.raises(TypeError, match="gnnc.Graph or an edge_index"):
        gnnc.explain(fn, "graph")
    assert gnnc.explain(fn).functions[0]["groups"][0]["ops"] == ["gnn.spmm sum"]


def test_constructor_checks():
    # PyG's aggregations that gnnc does not have: refused as such.
    for pygs in ("mul", ["mean", "mul"], "softmax"):
        with pytest.raises(NotImplementedError, match=r"aggr=.*\(PyG's\) is not supp"):
            SumConv(pygs)
    for bad in ([], ["mean", "frobnicate"], ["mean", 3], 7):
        with pytest.raises(ValueError, match="aggr must be one of .* a non-empty list"):
            SumConv(bad)
    # PyG's other constructor arguments: its defaults and GATConv's
    # node_dim=0 run as written; what gnnc does not do is refused.
    SumConv("sum", node_dim=0, decomposed_layers=2, aggr_kwargs={"mode": "cat"})
    for kw, err in ((dict(node_dim=1), NotImplementedError),
                    (dict(node_dim=-1), NotImplementedError),
                    (dict(decomposed_layers=0), ValueError),
                    (dict(aggr_kwargs={"mode": "attn"}), NotImplementedError),
                    (dict(aggr_kwargs={"semi_grad": True}), NotImplementedError)):
        with pytest.raises(err, match=str(next(iter(kw)))):
            SumConv("sum", **kw)
    # An aggr set later is checked where it is used.
    layer = SumConv("sum")
    layer.aggr = ["sum", "median"]
    ei, n = _graph()
    with pytest.raises(NotImplementedError, match="SumConv: aggr='median' \\(PyG's\\)"):
        layer(torch.randn(n, 2, dtype=torch.float64, device=DEVICE), ei)
    layer.aggr = ["sum", "frobnicate"]
    with pytest.raises(ValueError, match="SumConv: aggr .* got \\['sum', 'frobnicate'\\]"):
        layer(torch.randn(n, 2, dtype=torch.float64, device=DEVICE), ei)
    with pytest.raises(ValueError, match="fallback"):
        SumConv(fallback="eager")


def test_node_dim_of_batched_features():
    # PyG's default node_dim=-2 propagates a [B, N, C] tensor along its
    # N dimension (a batch of node features); gnnc propagates along the
    # first. Where PyG's reading fits the graph, gnnc refuses instead of
    # aggregating over the batch: for B == N (same shapes out, other
    # values) and B > N (ids below both) that answer was silently wrong.
    ei, n = _graph()
    for batch in (n, n + 3, 2):
        x = torch.randn(batch, n, 3, dtype=torch.float64, device=DEVICE)
        with pytest.raises(NotImplementedError,
                           match=rf"SumConv: x has shape \[{batch}, {n}, 3\]: with "
                                 rf"node_dim=-2 .* pass node_dim=0"):
            SumConv("sum")(x, ei)
    # Nodes first as gnnc reads them ([N, H, C] with ids past H, as
    # GATLike's heads), or node_dim=0 as PyG's GATConv passes: PyG's sums.
    x = torch.randn(n, 2, 3, dtype=torch.float64, device=DEVICE)
    want = _scatter(x[ei[0]], ei[1], n)
    for layer in (SumConv("sum"), SumConv("sum", node_dim=0)):
        torch.testing.assert_close(layer(x, ei), want)
    # PyG's attributes, which a layer's own code may read.
    layer = SumConv("sum", decomposed_layers=2)
    assert (layer.node_dim, layer.decomposed_layers) == (-2, 2)


# --------------------------------------------------------------------------
# The traced subset, op by op: each message runs traced (compiled) and
# unfused (PyTorch) on the same inputs.

class _Zoo(gnnc.MessagePassing):
    def __init__(self, body, aggr="sum"):
        super().__init__(aggr)
        self.body = body
        self.w = torch.nn.Parameter(torch.randn(3, 3, dtype=torch.float64))
        self.v = torch.nn.Parameter(torch.randn(3, dtype=torch.float64))

    def message(self, x_i, x_j, edge_attr, index):
        return self.body(self, x_i, x_j, edge_attr, index)


_MESSAGES = {
    "arithmetic": lambda s, xi, xj, ea, ix: (xj - xi) * ea / (1.5 + xi * xi) - 2.0 * -xj,
    "unary": lambda s, xi, xj, ea, ix: (torch.exp(-xj.abs()) + torch.log(1 + xi * xi)
                                        + torch.sqrt(1 + ea * ea) + torch.rsqrt(2 + xj * xj)
                                        + torch.tanh(xi) + torch.sigmoid(ea) + xj.sigmoid()),
    "activations": lambda s, xi, xj, ea, ix: (F.relu(xj) + F.leaky_relu(xi - ea, 0.3)
                                              + F.elu(xj + ea, alpha=0.7) + xi.relu()),
    "max_min_clamp": lambda s, xi, xj, ea, ix: (torch.maximum(xi, xj) - torch.minimum(xj, ea)
                                                + xj.clamp(min=-0.5, max=0.5)),
    "where": lambda s, xi, xj, ea, ix: (torch.where(xj > xi, xj * 2.0, ea)
                                        + xj.masked_fill(xj < 0, 0.0)),
    "powers": lambda s, xi, xj, ea, ix: xj ** 2 + (1 + xi * xi) ** -0.5 + xj.pow(3),
    "parameters": lambda s, xi, xj, ea, ix: xj @ s.w + s.v * ea + F.linear(xi, s.w, s.v),
    "feature_sums": lambda s, xi, xj, ea, ix: (xi * xj).sum(-1, keepdim=True) * ea
                                              + (xj * s.v).mean(-1).unsqueeze(-1),
    "softmax_weights": lambda s, xi, xj, ea, ix: (gnnc.softmax((xi * xj).sum(-1), ix)
                                                  .view(-1, 1) * xj),
    "softmax_of_edges": lambda s, xi, xj, ea, ix: gnnc.softmax(ea, ix) * (xj - xi),
    "edge_unit_reshapes": lambda s, xi, xj, ea, ix: ((ea * xi).sum(-1).view(-1, 1, 1)
                                                     .squeeze(-1) * (xj + ea)),
    "heads": lambda s, xi, xj, ea, ix: ((xj.view(-1, 3, 1) * ea.unsqueeze(-1)).sum(-1)
                                        + xi.view(-1, 1, 3).flatten(1)),
    "dst_only": lambda s, xi, xj, ea, ix: xi * 2.0,
    # softplus's threshold: PyTorch returns x where beta x > threshold (it
    # was dropped: 1.7 off at 0.5).
    "softplus": lambda s, xi, xj, ea, ix: (F.softplus(xj) + F.softplus(xi - ea, beta=2.0)
                                           + F.softplus(3.0 * xj, 1.5, 0.5)
                                           + F.softplus(xi, threshold=-1.0)),
    # PyTorch's keyword spellings (a bare TypeError before).
    "pytorch_spellings": lambda s, xi, xj, ea, ix: (
        xj.mul(other=ea).sum(axis=-1, keepdim=True) + xi.pow(exponent=2)
        + torch.add(xj, ea, alpha=2.0) + xj.sub(ea, alpha=0.5) + torch.div(xj, 2.0)
        + torch.sum(xi * ea, dim=-1, keepdim=True) + xj.clamp_min(min=0.1)),
}


@pytest.mark.parametrize("aggr", ["sum", "max"])
@pytest.mark.parametrize("name", sorted(_MESSAGES))
def test_traced_subset_matches_pytorch(name, aggr):
    ei, n = _graph()
    torch.manual_seed(10)
    layer = _Zoo(_MESSAGES[name], aggr).to(DEVICE)
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE)
    ea = torch.randn(ei.size(1), 3, dtype=torch.float64, device=DEVICE)
    traced = layer.propagate(ei, x=x, edge_attr=ea)
    unfused = layer._run_torch(ei, n, {"x": x, "edge_attr": ea})
    torch.testing.assert_close(traced, unfused)


@pytest.mark.parametrize("name", ["unary", "softmax_of_edges", "edge_unit_reshapes", "heads"])
def test_traced_subset_gradcheck(name):
    ei, n = _graph()
    torch.manual_seed(11)
    layer = _Zoo(_MESSAGES[name], "mean").to(DEVICE)
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE, requires_grad=True)
    ea = torch.randn(ei.size(1), 3, dtype=torch.float64, device=DEVICE, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, ea: layer.propagate(ei, x=x, edge_attr=ea),
                                    (x, ea))


def test_float32_and_empty_graphs():
    ei, n = _graph()
    torch.manual_seed(12)
    layer = GATLike(4, 2, 2).to(DEVICE)
    theirs = pyg_nn.GATConv(4, 2, heads=2, add_self_loops=False).to(DEVICE)
    with torch.no_grad():
        theirs.lin.weight.copy_(layer.lin.weight)
        theirs.att_src.copy_(layer.att_src)
        theirs.att_dst.copy_(layer.att_dst)
        theirs.bias.copy_(layer.bias)
    x = torch.randn(n, 4, device=DEVICE)
    torch.testing.assert_close(layer(x, ei), theirs(x, ei), rtol=1e-5, atol=1e-5)
    assert "f32" in layer.gnn_ir()
    # No edges: sums are 0 (the bias remains); no nodes: no rows.
    empty = torch.zeros(2, 0, dtype=torch.int64, device=DEVICE)
    torch.testing.assert_close(layer(x, empty), layer.bias.detach().expand(n, 4))
    assert layer(x[:0], empty).shape == (0, 4)


def test_torch_compile_with_the_eager_backend():
    ei, n = _graph()
    torch.manual_seed(15)
    layer = _f64(GATLike(4, 3, 2))
    x = torch.randn(n, 4, dtype=torch.float64, device=DEVICE)
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(layer)(x, ei)
    assert explanation.graph_break_count == 0, explanation.break_reasons
    torch._dynamo.reset()
    compiled = torch.compile(layer, backend="eager", fullgraph=True)
    torch.testing.assert_close(compiled(x, ei), layer(x, ei))


class _Normalised(gnnc.MessagePassing):
    """GCN's normalisation written per edge from node values, in an
    association that multiplies the features first."""

    def message(self, x_j, norm_i, norm_j, edge_weight):
        return norm_j.view(-1, 1) * (edge_weight.view(-1, 1) * ((x_j @ self.w) * norm_i))


def test_products_of_weights_and_source_features_are_one_spmm():
    ei, n = _graph()
    torch.manual_seed(16)
    layer = _Normalised()
    layer.w = torch.randn(3, 2, dtype=torch.float64, device=DEVICE, requires_grad=True)
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE, requires_grad=True)
    norm = torch.rand(n, 1, dtype=torch.float64, device=DEVICE, requires_grad=True)
    w = torch.rand(ei.size(1), dtype=torch.float64, device=DEVICE, requires_grad=True)
    out = layer.propagate(ei, x=x, norm=norm, edge_weight=w)
    src, dst = ei
    msg = norm[src] * w.view(-1, 1) * (x[src] @ layer.w) * norm[dst]
    torch.testing.assert_close(out, _scatter(msg, dst, n))
    # x_j @ W on the nodes, norm_j * w * norm_i as spmm's weights: no
    # edge-sized features.
    text = layer.gnn_ir()
    assert "weights(" in text and "gnn.reduce" not in text
    assert "gnn.gather src" not in text
    assert torch.autograd.gradcheck(
        lambda x, norm, w: layer.propagate(ei, x=x, norm=norm, edge_weight=w),
        (x, norm, w))


# --------------------------------------------------------------------------
# Tracing once per configuration.

def _count_traces(monkeypatch):
    calls = []
    real = gnnc.MessagePassing._trace

    def counting(self, *args):
        calls.append(type(self).__name__)
        return real(self, *args)

    monkeypatch.setattr(gnnc.MessagePassing, "_trace", counting)
    return calls


def test_a_steady_call_does_not_trace(monkeypatch):
    traces = _count_traces(monkeypatch)
    ei, n = _graph()
    torch.manual_seed(20)
    layer = _f64(GATLike(4, 3, 2))
    x = torch.randn(n, 4, dtype=torch.float64, device=DEVICE)
    first = layer(x, ei)
    for _ in range(3):
        torch.testing.assert_close(layer(x, ei), first)
    assert len(traces) == 1 and layer._uncached is None
    # The current parameters, also a replaced one (found by its path), get
    # the gradients.
    layer.att_src = torch.nn.Parameter(-2.0 * layer.att_src.detach())
    out = layer(x, ei)
    assert not torch.allclose(out, first) and len(traces) == 1
    out.sum().backward()
    assert layer.att_src.grad is not None and layer.lin.weight.grad is not None
    # The mode, a feature size: other keys.
    layer.eval()
    layer(x, ei)
    layer.propagate(ei, x=torch.randn(n, 2, 3, dtype=torch.float64, device=DEVICE))
    assert len(traces) == 3


def test_a_python_attribute_that_changes_traces_again(monkeypatch):
    traces = _count_traces(monkeypatch)
    ei, n = _graph()
    torch.manual_seed(21)
    layer = _f64(GATLike(4, 3, 2))
    x = torch.randn(n, 4, dtype=torch.float64, device=DEVICE)
    layer(x, ei)
    layer.negative_slope = 0.7
    fresh = _f64(GATLike(4, 3, 2, negative_slope=0.7))
    fresh.load_state_dict(layer.state_dict())
    torch.testing.assert_close(layer(x, ei), fresh(x, ei))
    assert traces == ["GATLike"] * 3


class _Configurable(gnnc.MessagePassing):
    """Reads a list attribute, a submodule and a tensor attribute in its
    message: what a call's configuration check must see change."""

    def __init__(self):
        super().__init__()
        self.scales = [2.0]
        self.act = torch.nn.ReLU()
        self.w = torch.nn.Parameter(torch.randn(3, dtype=torch.float64))

    def message(self, x_j):
        return self.act(x_j * self.w) * self.scales[0]


def _other_message(self, x_j):
    return -x_j


def _changes():
    """(what a user changes in place, the message it makes) on _Configurable."""
    def list_item(layer):
        layer.scales[0] = 3.0
        return lambda x, w: torch.relu(x * w) * 3.0

    def submodule(layer):
        layer.act = torch.nn.Tanh()
        return lambda x, w: torch.tanh(x * w) * 2.0

    def submodule_type(layer):
        layer.act.__class__ = torch.nn.Sigmoid
        return lambda x, w: torch.sigmoid(x * w) * 2.0

    def data_shape(layer):
        layer.w.data = torch.full((1,), 0.5, dtype=torch.float64, device=DEVICE)
        return lambda x, w: torch.relu(x * 0.5) * 2.0

    def frozen(layer):
        layer.w.requires_grad_(False)
        return lambda x, w: torch.relu(x * w) * 2.0

    def method(layer):
        layer.message = types.MethodType(_other_message, layer)
        return lambda x, w: -x

    def mode(layer):
        layer.eval()
        return lambda x, w: torch.relu(x * w) * 2.0
    return [list_item, submodule, submodule_type, data_shape, frozen, method, mode]


@pytest.mark.parametrize("change", _changes(), ids=lambda f: f.__name__)
def test_a_configuration_changed_in_place_is_keyed_again(change, monkeypatch):
    traces = _count_traces(monkeypatch)
    ei, n = _graph()
    torch.manual_seed(22)
    layer = _Configurable().to(DEVICE)
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE)
    for _ in range(2):
        out = layer.propagate(ei, x=x)
    w = layer.w.detach()
    torch.testing.assert_close(out, _scatter(torch.relu(x[ei[0]] * w) * 2.0, ei[1], n))
    assert len(traces) == 1
    expected = change(layer)
    w = layer.w.detach()
    for _ in range(2):
        out = layer.propagate(ei, x=x)
    torch.testing.assert_close(out, _scatter(expected(x[ei[0]], w), ei[1], n))
    assert len(traces) == 2, "the changed configuration traced once, then was found"


class _Reaches(gnnc.MessagePassing):
    """``pre`` is forward's only; message reads ``act`` through a nested
    function and ``w`` directly."""

    def __init__(self):
        super().__init__()
        self.pre = torch.nn.Linear(3, 3, dtype=torch.float64)
        self.act = torch.nn.ReLU()
        self.w = torch.nn.Parameter(torch.randn(3, dtype=torch.float64))

    def forward(self, x, edge_index):
        return self.propagate(edge_index, x=self.pre(x))

    def message(self, x_j):
        def scaled(t):
            return self.act(t) * 2.0
        return scaled(x_j * self.w)


def _helper_reads(layer, x_j):
    return layer.act(x_j)


class _CallsAMethod(_Reaches):
    def message(self, x_j):
        return self.helper(x_j)

    def helper(self, x_j):
        return self.act(x_j)


class _PassesSelf(_Reaches):
    def message(self, x_j):
        return _helper_reads(self, x_j)


class _UsesSuper(_Reaches):
    def message(self, x_j):
        return super().message(x_j)


class _ReadsAProperty(_Reaches):
    @property
    def gain(self):
        return self.pre.weight.shape[0]

    def message(self, x_j):
        return x_j * self.gain


class _ReadsByGetattr(_Reaches):
    def message(self, x_j):
        return getattr(self, "act")(x_j)


@pytest.mark.parametrize("cls, reach", [
    (_Reaches, {"act"}), (_CallsAMethod, None), (_PassesSelf, None), (_UsesSuper, None),
    (_ReadsAProperty, None), (_ReadsByGetattr, None), (SumConv, set())])
def test_what_message_can_reach_is_read_from_its_code(cls, reach):
    # A call checks the layer and the submodules message / update read
    # (self.name, nested functions included); where self is used another
    # way, every submodule.
    from gnnc import _message_passing as mp
    got = mp._reached_submodules(cls())
    assert (got if got is None else set(got)) == reach


def test_a_submodule_message_cannot_reach_changes_without_a_trace(monkeypatch):
    traces = _count_traces(monkeypatch)
    ei, n = _graph()
    torch.manual_seed(23)
    layer = _Reaches().to(DEVICE)
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE)

    def want():
        h = layer.pre(x)
        return _scatter(torch.relu(h[ei[0]] * layer.w) * 2.0, ei[1], n)
    torch.testing.assert_close(layer(x, ei), want())
    # forward's own module changes: message cannot see it, no new trace.
    layer.pre.weight.data = torch.randn(3, 3, dtype=torch.float64, device=DEVICE)
    layer.pre.eval()
    layer.pre = torch.nn.Linear(3, 3, dtype=torch.float64, device=DEVICE)
    torch.testing.assert_close(layer(x, ei), want())
    layer.pre.bias.data = torch.zeros(1, dtype=torch.float64, device=DEVICE)
    layer.pre.bias.requires_grad_(False)
    torch.testing.assert_close(layer(x, ei), want())
    assert len(traces) == 1
    # What message reads still is checked: act through the nested function.
    layer.act.__class__ = torch.nn.Tanh
    got = layer(x, ei)
    h = layer.pre(x)
    torch.testing.assert_close(got, _scatter(torch.tanh(h[ei[0]] * layer.w) * 2.0,
                                             ei[1], n))
    assert len(traces) == 2


def test_a_global_defined_later_is_seen(monkeypatch):
    # message calls the builtin abs; a module global of that name, defined
    # after the first call, shadows it.
    class ReadsABuiltin(gnnc.MessagePassing):
        def message(self, x_j):
            return abs(x_j)
    ei, n = _graph()
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE)
    layer = ReadsABuiltin()
    torch.testing.assert_close(layer.propagate(ei, x=x), _scatter(x[ei[0]].abs(), ei[1], n))
    monkeypatch.setitem(globals(), "abs", lambda t: t * 2)
    torch.testing.assert_close(layer.propagate(ei, x=x), _scatter(x[ei[0]] * 2, ei[1], n))


def test_a_captured_variable_that_changes_traces_again():
    scale = 2.0

    class Captures(gnnc.MessagePassing):
        def message(self, x_j):
            return x_j * scale
    ei, n = _graph()
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE)
    layer = Captures()
    torch.testing.assert_close(layer.propagate(ei, x=x), _scatter(x[ei[0]] * 2, ei[1], n))
    scale = 5.0
    torch.testing.assert_close(layer.propagate(ei, x=x), _scatter(x[ei[0]] * 5, ei[1], n))


def test_layers_that_switch_configurations_keep_each():
    # PNA-like: aggr set before each of several propagates in one forward.
    ei, n = _graph()
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE)
    layer = gnnc.MessagePassing()
    traces = []
    real = layer._trace
    layer._trace = lambda *a: traces.append(1) or real(*a)
    for _ in range(3):
        for aggr in ("sum", "max", "mean", "min"):
            layer.aggr = aggr
            torch.testing.assert_close(layer.propagate(ei, x=x),
                                       _scatter(x[ei[0]], ei[1], n, {"sum": "sum", "max": "amax",
                                                "mean": "mean", "min": "amin"}[aggr]))
    assert len(traces) == 4


_SCALE = 2.0


class _ReadsAGlobal(gnnc.MessagePassing):
    def message(self, x_j):
        return x_j * _SCALE


def test_a_global_that_changes_traces_again():
    global _SCALE
    ei, n = _graph()
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE)
    layer = _ReadsAGlobal()
    torch.testing.assert_close(layer.propagate(ei, x=x), 2.0 * _scatter(x[ei[0]], ei[1], n))
    _SCALE = 3.0
    try:
        torch.testing.assert_close(layer.propagate(ei, x=x), 3.0 * _scatter(x[ei[0]], ei[1], n))
    finally:
        _SCALE = 2.0


class _ScaleBase(gnnc.MessagePassing):
    scale = 2.0
    shift = [0.0]


class _ReadsAClassAttribute(_ScaleBase):
    def message(self, x_j):
        return x_j * self.scale + self.shift[0]


def _class_attribute_changes(layer_class):
    """(change, scale, shift) in turn: the base's value, a subclass's own,
    a list changed in place, the subclass's deleted (the base's again), an
    attribute of the layer itself (over the class's)."""
    return ((lambda layer: None, 2.0, 0.0),
            (lambda layer: setattr(_ScaleBase, "scale", 5.0), 5.0, 0.0),
            (lambda layer: setattr(layer_class, "scale", 3.0), 3.0, 0.0),
            (lambda layer: _ScaleBase.shift.__setitem__(0, 0.5), 3.0, 0.5),
            (lambda layer: delattr(layer_class, "scale"), 5.0, 0.5),
            (lambda layer: setattr(layer, "scale", 7.0), 7.0, 0.5))


@pytest.fixture
def _restore_scale_base():
    yield
    _ScaleBase.scale, _ScaleBase.shift = 2.0, [0.0]
    if "scale" in _ReadsAClassAttribute.__dict__:
        del _ReadsAClassAttribute.scale


def test_a_class_attribute_that_changes_traces_again(monkeypatch, _restore_scale_base):
    # message reads self.scale / self.shift from the class (not the layer):
    # a value assigned to the class after a call was not seen (the key held
    # the layer's own attributes only), the old trace ran on: a silent wrong
    # result. Unchanged, the trace is kept.
    traces = _count_traces(monkeypatch)
    ei, n = _graph()
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE)
    layer = _ReadsAClassAttribute()
    for change, scale, shift in _class_attribute_changes(_ReadsAClassAttribute):
        change(layer)
        torch.testing.assert_close(layer.propagate(ei, x=x),
                                   _scatter(x[ei[0]] * scale + shift, ei[1], n))
    before = len(traces)
    layer.propagate(ei, x=x)
    assert len(traces) == before and layer._uncached is None


class _Propagates(torch.nn.Module):
    """A model whose forward is `conv.propagate(edge_index, x=x)`."""

    def __init__(self, conv, edge_index):
        super().__init__()
        self.conv, self.edge_index = conv, edge_index

    def forward(self, x):
        return self.conv.propagate(self.edge_index, x=x)


def _compiled_propagate(conv, edge_index):
    """(model, its torch.compile'd self: fullgraph, eager backend), dynamo
    reset first."""
    model = _Propagates(conv, edge_index)
    torch._dynamo.reset()
    return model, torch.compile(model, backend="eager", fullgraph=True)


def test_torch_compile_sees_a_changed_class_attribute(_restore_scale_base):
    ei, n = _graph()
    model, compiled = _compiled_propagate(_ReadsAClassAttribute(), ei)
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE)
    for change, scale, shift in _class_attribute_changes(_ReadsAClassAttribute):
        change(model.conv)
        torch.testing.assert_close(compiled(x), _scatter(x[ei[0]] * scale + shift, ei[1], n))


class _ComputesAWeight(gnnc.MessagePassing):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(3, 2))

    def message(self, x_j):
        return x_j @ (2 * self.w)  # a tensor of the layer's own making


def test_a_tensor_computed_from_the_layer_is_recomputed_not_retraced(monkeypatch):
    # 2 * self.w runs in PyTorch on every call (its recipe: the op on the
    # current w), the trace is kept.
    traces = _count_traces(monkeypatch)
    ei, n = _graph()
    layer = _f64(_ComputesAWeight())
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE)
    layer.propagate(ei, x=x)
    with torch.no_grad():
        layer.w.mul_(-1.0)
    out = layer.propagate(ei, x=x)
    torch.testing.assert_close(out, _scatter(x[ei[0]] @ (2 * layer.w), ei[1], n))
    assert len(traces) == 1 and layer._uncached is None
    out.sum().backward()
    assert layer.w.grad is not None
    # MyGIN's update: (1 + self.eps) * x + aggr_out.
    gin = _f64(MyGIN(_mlp()))
    y = torch.randn(n, 4, dtype=torch.float64, device=DEVICE)
    gin(y, ei)
    with torch.no_grad():
        gin.eps.fill_(0.5)
    torch.testing.assert_close(gin(y, ei), gin.nn(1.5 * y + _scatter(y[ei[0]], ei[1], n)))
    assert traces.count("MyGIN") == 1 and gin._uncached is None


class _ScalarGates(gnnc.MessagePassing):
    """Elementwise ops on the layer's own small tensors, written as PyTorch
    code: folded into the traced function (no op in PyTorch per call)."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.tensor([0.3]))
        self.b = torch.nn.Parameter(torch.tensor([0.2, -0.4, 0.7]))

    def message(self, x_j):
        return x_j * (1 - self.b.sigmoid()) + (2 / (1 + self.a.exp())) * x_j

    def update(self, aggr_out, x):
        return aggr_out - torch.tanh(self.b) * x + (-self.a) * (self.a * 3.0 - 1.0) + \
            F.relu(self.b) * torch.maximum(self.b.abs().sqrt(), self.a) * x


def _scalar_gates_reference(layer, x, ei, n):
    a, b = layer.a, layer.b
    m = x[ei[0]] * (1 - b.sigmoid()) + (2 / (1 + a.exp())) * x[ei[0]]
    return _scatter(m, ei[1], n) - torch.tanh(b) * x + (-a) * (a * 3.0 - 1.0) + \
        F.relu(b) * torch.maximum(b.abs().sqrt(), a) * x


def test_ops_on_the_layers_small_tensors_run_inside_the_function():
    ei, n = _graph()
    layer = _f64(_ScalarGates())
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE, requires_grad=True)
    torch.testing.assert_close(layer.propagate(ei, x=x),
                               _scalar_gates_reference(layer, x, ei, n))
    (plan,) = layer._plans.values()
    # Only the input and the two parameters: no recipe replays a torch op.
    assert sorted(r[0] for r in plan.recipes) == ["attr", "attr", "kw"]
    ir_text = layer.gnn_ir()
    assert "arith.subf" in ir_text and "math.tanh" in ir_text and "math.sqrt" in ir_text

    def fn(x, a, b):
        return _propagate_with(layer, ei, x, a, b)
    a = layer.a.detach().clone().requires_grad_()
    b = layer.b.detach().clone().requires_grad_()
    assert torch.autograd.gradcheck(fn, (x, a, b))
    # The values of a later call are the parameters' values then.
    with torch.no_grad():
        layer.a.fill_(-1.5)
        layer.b.mul_(2.0)
    torch.testing.assert_close(layer.propagate(ei, x=x),
                               _scalar_gates_reference(layer, x, ei, n))


class _ScalarTwice(gnnc.MessagePassing):
    """A 0-d parameter read by message and update (its two gradients summed
    over 0-d tensors: the autodiff crashed, the process died)."""

    def __init__(self):
        super().__init__(aggr="sum")
        self.p = torch.nn.Parameter(torch.tensor(0.5))

    def forward(self, x, ei):
        return self.propagate(ei, x=x)

    def message(self, x_j):
        return x_j * self.p

    def update(self, aggr_out):
        return aggr_out * self.p


def test_a_scalar_parameter_used_twice():
    ei, n = _graph()
    layer = _f64(_ScalarTwice())
    x = torch.randn(n, 4, dtype=torch.float64, device=DEVICE, requires_grad=True)
    if x.is_cuda:
        # The CUDA backend's tensors have rows: a 0-d one is refused clearly
        # (seen on an H200), with the way out named.
        with pytest.raises(gnnc.TraceError, match=r"0-d tensor .* shape \[1\]"):
            layer(x, ei)
        return
    y = layer(x, ei)
    want = _scatter(x[ei[0]] * layer.p, ei[1], n) * layer.p
    torch.testing.assert_close(y, want)
    gy = torch.randn_like(y)
    got = torch.autograd.grad(y, (x, layer.p), gy)
    torch.testing.assert_close(got, torch.autograd.grad(want, (x, layer.p), gy))


class _Scaled(gnnc.MessagePassing):
    def __init__(self):
        super().__init__(aggr="sum")
        self.lin = torch.nn.Linear(4, 4)
        self.a = torch.nn.Parameter(torch.tensor([2.0]))

    def forward(self, x, ei):
        return self.propagate(ei, x=self.lin(x))

    def message(self, x_j):
        return x_j * self.a


def test_copies_and_pickles_after_a_call_are_layers_of_their_own():
    # After the first call the layer holds compiled plans (native objects):
    # deepcopy, pickle and torch.save failed. A copy made before it shared
    # its original's registry id, so the compiled forward of the copy went
    # through the original (and failed once the original was gone).
    ei, n = _graph()
    x = torch.randn(n, 4, device=DEVICE)
    early = _Scaled().to(DEVICE)
    twin = copy.deepcopy(early)
    y = early(x, ei)
    for c in (copy.deepcopy(early), pickle.loads(pickle.dumps(early)), twin):
        assert c._mp_id != early._mp_id
        torch.testing.assert_close(c(x, ei), y)
    buf = io.BytesIO()
    torch.save(torch.nn.Sequential(early), buf)
    buf.seek(0)
    torch.testing.assert_close(torch.load(buf, weights_only=False)[0](x, ei), y)
    with torch.no_grad():
        twin.a.fill_(5.0)
    del early
    gc.collect()
    compiled = torch.compile(twin, fullgraph=True)
    torch.testing.assert_close(compiled(x, ei), 2.5 * y)


def _propagate_with(layer, ei, x, a, b):
    saved = layer.a, layer.b
    layer._parameters["a"], layer._parameters["b"] = a, b
    try:
        return layer.propagate(ei, x=x)
    finally:
        layer._parameters["a"], layer._parameters["b"] = saved


class _ReadsANewTensor(gnnc.MessagePassing):
    def message(self, x_j):
        return x_j * torch.full((3,), float(len(_NEW)), dtype=x_j.dtype,
                                device=x_j.device)


_NEW = [1.0]


def test_a_tensor_of_unknown_origin_traces_every_call(monkeypatch):
    traces = _count_traces(monkeypatch)
    ei, n = _graph()
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE)
    layer = _ReadsANewTensor()
    torch.testing.assert_close(layer.propagate(ei, x=x), _scatter(x[ei[0]], ei[1], n))
    _NEW.append(2.0)
    try:
        torch.testing.assert_close(layer.propagate(ei, x=x),
                                   2.0 * _scatter(x[ei[0]], ei[1], n))
    finally:
        _NEW.pop()
    assert len(traces) == 2 and "is not an argument, parameter" in layer._uncached


def test_dropout_masks_are_drawn_on_every_call(monkeypatch):
    traces = _count_traces(monkeypatch)
    ei, n = _graph()
    torch.manual_seed(22)
    layer = _f64(GATLike(4, 3, 2, dropout=0.5)).train()
    x = torch.randn(n, 4, dtype=torch.float64, device=DEVICE)
    outs = [layer(x, ei) for _ in range(4)]
    assert len(traces) == 1
    assert any(not torch.allclose(outs[0], o) for o in outs[1:])
    # The replay draws as the trace did: the same seed, the same output.
    torch.manual_seed(23)
    a = layer(x, ei)
    torch.manual_seed(23)
    torch.testing.assert_close(layer(x, ei), a)


# --------------------------------------------------------------------------
# torch.compile(fullgraph=True): no graph break.

class _SetsItsAttributes(gnnc.MessagePassing):
    """PNA's pattern: attributes assigned in forward between propagates."""

    def __init__(self):
        super().__init__("mean")
        self.scale = 1.0

    def forward(self, x, edge_index):
        outs = []
        for aggr, scale in (("max", 2.0), ("sum", -1.0), ("min", 0.5)):
            self.aggr, self.scale = aggr, scale
            outs.append(self.propagate(edge_index, x=x))
        return torch.cat(outs, dim=-1)

    def message(self, x_j):
        return self.scale * x_j


@pytest.mark.skipif(DEVICE.type != "cpu", reason="the CPU compile test")
def test_torch_compile_sees_attributes_assigned_in_forward():
    # dynamo applies `self.aggr = ...` to the layer after tracing; each
    # propagate must still trace with the value of its moment.
    from torch._dynamo.utils import counters
    ei, n = _graph()
    layer = _f64(_SetsItsAttributes())
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE, requires_grad=True)
    src, dst = ei
    want = torch.cat([_scatter(2.0 * x[src], dst, n, "amax"),
                      _scatter(-1.0 * x[src], dst, n),
                      _scatter(0.5 * x[src], dst, n, "amin")], dim=-1)
    torch.testing.assert_close(layer(x, ei), want)
    torch._dynamo.reset()
    counters.clear()
    got = torch.compile(layer, fullgraph=True)(x, ei)
    torch.testing.assert_close(got, want)
    assert not counters["graph_break"], dict(counters["graph_break"])
    assert layer.aggr == "min" and layer.scale == 0.5
    gx, = torch.autograd.grad(got.sum(), [x])
    wx, = torch.autograd.grad(layer(x, ei).sum(), [x])
    torch.testing.assert_close(gx, wx)


class _SetsATuple(_SetsItsAttributes):
    def forward(self, x, edge_index):
        self.scales = (3.0,)
        return self.propagate(edge_index, x=x)

    def message(self, x_j):
        return self.scales[0] * x_j


@pytest.mark.skipif(DEVICE.type != "cpu", reason="the CPU compile test")
def test_torch_compile_refuses_a_tuple_assigned_in_forward():
    # Not swapped into the layer as numbers and strings are: refused (by
    # gnnc's check or by dynamo, which refuses the non-strict call after a
    # container was assigned), never traced with the value before the call.
    ei, n = _graph()
    layer = _f64(_SetsATuple())
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE)
    layer.scales = (1.0,)
    torch._dynamo.reset()
    with pytest.raises(Exception, match=r"was assigned inside|nonstrict_trace"):
        torch.compile(layer, fullgraph=True)(x, ei)
    layer.scales = (1.0,)
    torch._dynamo.reset()
    out = torch.compile(layer)(x, ei)  # with graph breaks allowed: eager there
    torch.testing.assert_close(out, 3.0 * _scatter(x[ei[0]], ei[1], n, "mean"))


@pytest.mark.skipif(DEVICE.type != "cpu", reason="the CPU compile test")
def test_torch_compile_fullgraph_two_layers():
    from torch._dynamo.utils import counters

    class Two(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = GATLike(4, 3, 2)
            self.conv2 = WeightedConv(6, 2)

        def forward(self, x, edge_index, w):
            return self.conv2(F.elu(self.conv1(x, edge_index)), edge_index, w)

    ei, n = _graph()
    torch.manual_seed(24)
    model = _f64(Two())
    x = torch.randn(n, 4, dtype=torch.float64, device=DEVICE, requires_grad=True)
    w = torch.rand(ei.size(1), dtype=torch.float64, device=DEVICE)
    eager = model(x, ei, w)
    grads = torch.autograd.grad(eager.sum(), [x] + list(model.parameters()))
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(model, fullgraph=True)
    out = compiled(x, ei, w)
    torch.testing.assert_close(out, eager)
    for g, want in zip(torch.autograd.grad(out.sum(), [x] + list(model.parameters())), grads):
        torch.testing.assert_close(g, want)
    assert not counters["graph_break"], dict(counters["graph_break"])
    # A changed Python attribute reaches the compiled code (dynamo guards the
    # module and recompiles).
    model.conv1.negative_slope = 0.6
    torch.testing.assert_close(compiled(x, ei, w), model(x, ei, w))
    explanation = torch._dynamo.explain(model)(x, ei, w)
    assert explanation.graph_break_count == 0, explanation.break_reasons


# --------------------------------------------------------------------------
# Issue 33 (c): gnnc.nn's attention layers and GIN written as
# gnnc.MessagePassing subclasses, as a user would, against the built-in
# layers under the same weights.

def _pyg_self_loops(edge_index, n):
    """PyG's add_self_loops after remove_self_loops (as GATConv does), with
    gnnc.utils' cached versions of the two (the same tensor on every call)."""
    loop_free, _ = gnnc.utils.remove_self_loops(edge_index)
    return gnnc.utils.add_self_loops(loop_free, num_nodes=n)[0]


class MyGAT(gnnc.MessagePassing):
    """GAT as its formula reads per edge: gnnc computes the attention
    terms a_src . x_j and a_dst . x_i once per node (they read one end of
    the edge only), as the built-in layer does."""

    def __init__(self, cin, cout, heads):
        super().__init__("sum")
        self.heads, self.cout = heads, cout
        self.lin = torch.nn.Linear(cin, heads * cout, bias=False)
        self.att_src = torch.nn.Parameter(torch.randn(1, heads, cout))
        self.att_dst = torch.nn.Parameter(torch.randn(1, heads, cout))
        self.bias = torch.nn.Parameter(torch.randn(heads * cout))

    def forward(self, x, edge_index):
        h = self.lin(x).view(-1, self.heads, self.cout)
        out = self.propagate(_pyg_self_loops(edge_index, x.size(0)), x=h)
        return out.view(-1, self.heads * self.cout) + self.bias

    def message(self, x_j, x_i, index):
        alpha = (x_j * self.att_src).sum(-1) + (x_i * self.att_dst).sum(-1)
        alpha = gnnc.softmax(F.leaky_relu(alpha, 0.2), index)
        return alpha.unsqueeze(-1) * x_j


class MyGATPyG(MyGAT):
    """GAT transcribed from PyG's GATConv: the attention terms computed
    per node in forward (in PyTorch) and passed to propagate."""

    def forward(self, x, edge_index):
        h = self.lin(x).view(-1, self.heads, self.cout)
        a = ((h * self.att_src).sum(-1), (h * self.att_dst).sum(-1))
        out = self.propagate(_pyg_self_loops(edge_index, x.size(0)), x=h, alpha=a)
        return out.view(-1, self.heads * self.cout) + self.bias

    def message(self, x_j, alpha_j, alpha_i, index):
        alpha = gnnc.softmax(F.leaky_relu(alpha_j + alpha_i, 0.2), index)
        return alpha.unsqueeze(-1) * x_j


class MyGATv2(gnnc.MessagePassing):
    def __init__(self, cin, cout, heads):
        super().__init__("sum")
        self.heads, self.cout = heads, cout
        self.lin_l = torch.nn.Linear(cin, heads * cout)
        self.lin_r = torch.nn.Linear(cin, heads * cout)
        self.att = torch.nn.Parameter(torch.randn(1, heads, cout))
        self.bias = torch.nn.Parameter(torch.randn(heads * cout))

    def forward(self, x, edge_index):
        x_l = self.lin_l(x).view(-1, self.heads, self.cout)
        x_r = self.lin_r(x).view(-1, self.heads, self.cout)
        out = self.propagate(_pyg_self_loops(edge_index, x.size(0)), x=(x_l, x_r))
        return out.view(-1, self.heads * self.cout) + self.bias

    def message(self, x_j, x_i, index):
        alpha = (F.leaky_relu(x_j + x_i, 0.2) * self.att).sum(-1)
        return gnnc.softmax(alpha, index).unsqueeze(-1) * x_j


class MyTransformer(gnnc.MessagePassing):
    def __init__(self, cin, cout, heads):
        super().__init__("sum")
        self.heads, self.cout = heads, cout
        self.lin_key = torch.nn.Linear(cin, heads * cout)
        self.lin_query = torch.nn.Linear(cin, heads * cout)
        self.lin_value = torch.nn.Linear(cin, heads * cout)
        self.lin_skip = torch.nn.Linear(cin, heads * cout)

    def forward(self, x, edge_index):
        H, C = self.heads, self.cout
        out = self.propagate(edge_index, query=self.lin_query(x).view(-1, H, C),
                             key=self.lin_key(x).view(-1, H, C),
                             value=self.lin_value(x).view(-1, H, C))
        return out.view(-1, H * C) + self.lin_skip(x)

    def message(self, query_i, key_j, value_j, index):
        alpha = (query_i * key_j).sum(-1) / self.cout ** 0.5
        return value_j * gnnc.softmax(alpha, index).unsqueeze(-1)


class MyGIN(gnnc.MessagePassing):
    """PyG's GINConv: nn((1 + eps) x + sum_j x_j), the combination in
    update (fused with the aggregation), nn in forward (PyTorch)."""

    def __init__(self, nn):
        super().__init__("sum")
        self.nn = nn
        self.eps = torch.nn.Parameter(torch.zeros(1))

    def forward(self, x, edge_index):
        return self.nn(self.propagate(edge_index, x=x))

    def update(self, aggr_out, x):
        return (1 + self.eps) * x + aggr_out


class MyGINUpdate(MyGIN):
    """GIN with nn inside update: the MLP is traced into gnnc's function."""

    def forward(self, x, edge_index):
        return self.propagate(edge_index, x=x)

    def update(self, aggr_out, x):
        return self.nn((1 + self.eps) * x + aggr_out)


def _mlp():
    return torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.ReLU(), torch.nn.Linear(5, 3))


@pytest.mark.parametrize("mine,builtin", [
    (lambda: MyGAT(4, 3, 2), lambda: gnnc.nn.GATConv(4, 3, heads=2)),
    (lambda: MyGATv2(4, 3, 2), lambda: gnnc.nn.GATv2Conv(4, 3, heads=2)),
    (lambda: MyTransformer(4, 3, 2), lambda: gnnc.nn.TransformerConv(4, 3, heads=2)),
    (lambda: MyGIN(_mlp()), lambda: gnnc.nn.GINConv(_mlp(), train_eps=True)),
    (lambda: MyGATPyG(4, 3, 2), lambda: gnnc.nn.GATConv(4, 3, heads=2)),
    (lambda: MyGINUpdate(_mlp()), lambda: gnnc.nn.GINConv(_mlp(), train_eps=True)),
], ids=["GATConv", "GATv2Conv", "TransformerConv", "GINConv", "GATConv-pyg-form",
        "GINConv-nn-in-update"])
def test_builtin_layers_as_message_passing(mine, builtin):
    import gnnc.nn  # noqa: F401
    ei, n = _graph()
    torch.manual_seed(30)
    ours, theirs = _f64(mine()), _f64(builtin())
    with torch.no_grad():
        for p in theirs.parameters():  # nonzero biases and eps
            p.uniform_(-1.0, 1.0)
    ours.load_state_dict(theirs.state_dict())
    x = torch.randn(n, 4, dtype=torch.float64, device=DEVICE, requires_grad=True)
    want, got = theirs(x, ei), ours(x, ei)
    torch.testing.assert_close(got, want)
    g = torch.randn_like(want)
    grads = torch.autograd.grad(got, [x] + list(ours.parameters()), g)
    wants = torch.autograd.grad(want, [x] + list(theirs.parameters()), g)
    names = ["x"] + [k for k, _ in ours.named_parameters()]
    assert names[1:] == [k for k, _ in theirs.named_parameters()]
    for name, a, b in zip(names, grads, wants):
        torch.testing.assert_close(a, b, msg=lambda m: f"{name}: {m}")


def test_plain_tensor_attributes_are_noted_for_torch_compile():
    # Under torch.compile propagate passes the layer's plain tensor
    # attributes by the names __setattr__ noted (dynamo cannot iterate a
    # module's __dict__): set, replaced by a non-tensor, deleted, a buffer.
    layer = gnnc.MessagePassing()
    assert layer._tensor_names == ()
    layer.w = torch.ones(2)
    layer.v = torch.ones(3)
    assert layer._tensor_names == ("w", "v")
    layer.w = 2.0
    assert layer._tensor_names == ("v",)
    del layer.v
    layer.register_buffer("b", torch.ones(1))
    layer.p = torch.nn.Parameter(torch.ones(1))
    assert layer._tensor_names == ()
    import gnnc._message_passing as mp
    assert sorted(".".join(k) for k, _ in mp._compiled_tensors(layer, ())) == ["b", "p"]


class _ReadsAPlainTensor(gnnc.MessagePassing):
    def message(self, x_j):
        return x_j * self.scale


def test_a_plain_tensor_attribute_under_torch_compile_gets_its_gradient():
    ei, n = _graph()
    layer = _ReadsAPlainTensor()
    layer.scale = torch.tensor([1.5, -2.0, 0.5], dtype=torch.float64, device=DEVICE,
                               requires_grad=True)
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE)
    torch._dynamo.reset()
    compiled = torch.compile(lambda x, ei: layer.propagate(ei, x=x), backend="eager",
                             fullgraph=True)
    out = compiled(x, ei)
    torch.testing.assert_close(out, _scatter(x[ei[0]] * layer.scale.detach(), ei[1], n))
    out.sum().backward()
    want = _scatter(x[ei[0]], ei[1], n).sum(0)
    torch.testing.assert_close(layer.scale.grad, want)


class _Configured(gnnc.MessagePassing):
    def __init__(self):
        super().__init__()
        self.fn = F.relu
        self.scales = [2.0]

    def message(self, x_j):
        return self.fn(x_j) * self.scales[0]


def test_torch_compile_sees_a_changed_attribute():
    # The trace reads the layer's attributes where dynamo does not look; the
    # image propagate hands it makes dynamo guard them and recompile.
    ei, n = _graph()
    model, compiled = _compiled_propagate(_Configured(), ei)
    layer = model.conv
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE)
    for change in (lambda: None, lambda: setattr(layer, "scales", [3.0]),
                   lambda: layer.scales.__setitem__(0, 4.0),
                   lambda: setattr(layer, "fn", torch.tanh),
                   lambda: setattr(layer, "aggr", "max")):
        change()
        torch.testing.assert_close(compiled(x), layer.propagate(ei, x=x))


class _OptionalWeight(gnnc.MessagePassing):
    def message(self, x_j, edge_weight):
        return x_j if edge_weight is None else x_j * edge_weight.view(-1, 1)


def test_torch_compile_follows_a_float_that_changes_between_calls():
    # A float attribute read in message, and a float keyword of propagate,
    # changed between compiled calls: dynamo hands the second value over
    # symbolic (automatic dynamic), and the traced function refused it
    # (dynamo: "Unsupported output type for nonstrict_trace-ed function").
    # Each value is a constant of its own function now, as in eager mode.
    class Scaled(gnnc.MessagePassing):
        def __init__(self):
            super().__init__(aggr="add")
            self.alpha = 0.5

        def forward(self, x, edge_index, s):
            return self.propagate(edge_index, x=x, s=s)

        def message(self, x_j, s):
            return x_j * self.alpha + s * x_j
    ei, n = _graph()
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE)
    layer = Scaled().to(DEVICE)
    torch._dynamo.reset()
    compiled = torch.compile(layer, fullgraph=True)
    for alpha, s in ((0.5, 0.25), (2.0, 0.25), (2.0, -1.5), (3.25, 4.0), (0.5, 0.25)):
        layer.alpha = alpha
        want = _scatter(x[ei[0]] * (alpha + s), ei[1], n)
        torch.testing.assert_close(compiled(x, ei, s), want, msg=f"{alpha}, {s}")


def test_torch_compile_takes_a_none_keyword_and_refuses_a_string():
    ei, n = _graph()
    layer = _OptionalWeight()
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE)
    torch._dynamo.reset()
    compiled = torch.compile(lambda x: layer.propagate(ei, x=x, edge_weight=None),
                             backend="eager", fullgraph=True)
    torch.testing.assert_close(compiled(x), _scatter(x[ei[0]], ei[1], n))
    torch._dynamo.reset()
    bad = torch.compile(lambda x: layer.propagate(ei, x=x, edge_weight="w"),
                        backend="eager", fullgraph=True)
    with pytest.raises(Exception, match="under torch.compile the keyword 'edge_weight'"):
        bad(x)


@pytest.mark.parametrize("aggr", ["max", "min"])
@pytest.mark.parametrize("scale", [None, 1.5])
def test_attention_weights_aggregated_by_max_or_min(aggr, scale):
    """Softmax weights (alone, or scaled: an edge-valued map between) times
    x_j, aggregated by max/min: the backward finds each row's winning edges
    by comparing their values with the stored extremum, so it must see the
    forward's weights. Made again as exp(s - lse) they differed from the
    forward's in the last bits, no edge won, and the gradient was wrong
    (gradcheck failed; PyG's passes)."""
    from torch_geometric.utils import softmax as pyg_softmax

    def body(soft):
        def message(self, x_i, x_j, index):
            a = soft((x_i * x_j).sum(-1), index)
            if scale is not None:
                a = a * scale
            return a.unsqueeze(-1) * x_j
        return message

    def forward(self, x, edge_index):
        return self.propagate(edge_index, x=x)
    ours = type("Ours", (gnnc.MessagePassing,), {"message": body(gnnc.softmax),
                                                 "forward": forward})(aggr=aggr)
    theirs = type("Theirs", (pyg_nn.MessagePassing,), {"message": body(pyg_softmax),
                                                       "forward": forward})(aggr=aggr)
    ei, n = _graph()
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(n, 4, generator=gen, dtype=torch.float64).to(DEVICE)
    for dtype in (torch.float32, torch.float64):
        xo = x.to(dtype).requires_grad_()
        xp = x.to(dtype).requires_grad_()
        out, want = ours(xo, ei), theirs(xp, ei)
        tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else {}
        torch.testing.assert_close(out, want, **tol)
        dy = torch.randn(want.shape, generator=gen, dtype=torch.float64).to(DEVICE)
        (out * dy.to(dtype)).sum().backward()
        (want * dy.to(dtype)).sum().backward()
        torch.testing.assert_close(xo.grad, xp.grad, **tol)
    assert torch.autograd.gradcheck(lambda v: ours(v, ei), (x.clone().requires_grad_(),))


@pytest.mark.parametrize("read", ["item", "float", "branch", "tolist"])
def test_a_python_value_read_from_a_layer_tensor_is_not_kept(read):
    """`message` reading a number from one of the layer's tensors (item(),
    float(), a branch on a comparison, tolist()) gets a constant in its
    trace: the layer must not reuse that trace once the tensor changes (it
    did, and returned the old value's result)."""
    reads = {
        "item": lambda self, x_j: x_j * self.t.item(),
        "float": lambda self, x_j: x_j * float(self.t),
        "branch": lambda self, x_j: x_j * 2.0 if self.t > 2.5 else x_j,
        "tolist": lambda self, x_j: x_j * self.t.tolist(),
    }

    class Layer(gnnc.MessagePassing):
        def __init__(self):
            super().__init__()
            self.register_buffer("t", torch.tensor(2.0, device=DEVICE))

        def forward(self, x, edge_index):
            return self.propagate(edge_index, x=x)
    Layer.message = reads[read]
    ei, n = _graph()
    x = torch.ones(n, 2, dtype=torch.float64, device=DEVICE)
    layer = Layer()
    first = layer(x, ei)
    assert layer._uncached is not None and "read from one of the layer's tensors" \
        in layer._uncached
    with torch.no_grad():
        layer.t.fill_(5.0)
    fresh = Layer()
    with torch.no_grad():
        fresh.t.fill_(5.0)
    torch.testing.assert_close(layer(x, ei), fresh(x, ei))
    assert not torch.equal(first, fresh(x, ei))


def _ours_and_pygs(message, aggr="sum"):
    """The layer `propagate(edge_index, x=x)` with `message`, as a
    gnnc.MessagePassing and as a PyG MessagePassing."""
    def forward(self, x, edge_index):
        return self.propagate(edge_index, x=x)
    attrs = {"message": message, "forward": forward}
    return (type("Ours", (gnnc.MessagePassing,), attrs)(aggr=aggr),
            type("Theirs", (pyg_nn.MessagePassing,), attrs)(aggr=aggr))


def _inplace_aliased(self, x_i, x_j):
    m = x_j * 2.0
    alias = m
    alias *= x_i
    return m


def _inplace_each(self, x_i, x_j):
    x_j *= 2.0
    x_j += x_i
    x_j -= 0.5
    x_j /= 3.0
    x_j **= 2
    return x_j + x_i


def _inplace_clone(self, x_i, x_j):
    c = x_j.clone()
    c *= 3.0
    return x_j + c


for _f in (_inplace_aliased, _inplace_each, _inplace_clone):
    _f.__name__ = "message"  # (PyG's inspector finds it by that name)


@pytest.mark.parametrize("message", [_inplace_aliased, _inplace_each, _inplace_clone],
                         ids=["aliased", "each", "clone"])
def test_augmented_assignment_changes_the_tensor_in_place(message):
    """`a *= b` in message changes the tensor in place, as in PyTorch: another
    name bound to it sees the change (Python fell back to a = a * b, and an
    alias kept the old value: a silently different result); a clone does not."""
    ours, theirs = _ours_and_pygs(message)
    ei, n = _graph()
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(n, 3, generator=gen, dtype=torch.float64).to(DEVICE)
    torch.testing.assert_close(ours(x, ei), theirs(x, ei))


def test_augmented_assignment_on_a_view_is_refused():
    def message(self, x_j):
        h = x_j.view(-1, 2, 2)
        h *= 2.0
        return x_j

    def forward(self, x, edge_index):
        return self.propagate(edge_index, x=x)
    layer = type("Ours", (gnnc.MessagePassing,), {"message": message, "forward": forward})()
    ei, n = _graph()
    with pytest.raises(gnnc.TraceError, match=r"in-place operator \*= .*view"):
        layer(torch.randn(n, 4, dtype=torch.float64, device=DEVICE), ei)


_WHERE_ONE_END = {
    "where(x_i > 0, x_j, 0)": lambda self, x_i, x_j: torch.where(x_i > 0, x_j, 0.0),
    "where(x_i > 0, x_j, x_i)": lambda self, x_i, x_j: torch.where(x_i > 0, x_j, x_i),
    "where(x_j > 0, x_j, x_i)": lambda self, x_i, x_j: torch.where(x_j > 0, x_j, x_i),
    "masked_fill(x_i < 0)": lambda self, x_i, x_j: x_j.masked_fill(x_i < 0, -1.0),
    "where(x_j > 0, 1, 0) * x_i": lambda self, x_i, x_j:
        torch.where(x_j > 0, 1.0, 0.0) * x_i,
}


@pytest.mark.parametrize("name", sorted(_WHERE_ONE_END))
def test_a_condition_on_one_end_selects_the_other(name):
    """A torch.where / masked_fill whose condition compares one end with a
    constant and whose values read the other end: the comparison runs on
    the edges (it was made a node value first, which no kernel can store:
    a bare ValueError from gnnc.ir, not even a TraceError)."""
    message = _WHERE_ONE_END[name]
    message.__name__ = "message"

    ours, theirs = _ours_and_pygs(message)
    ei, n = _graph()
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(n, 3, generator=gen, dtype=torch.float64).to(DEVICE)
    xo, xp = x.clone().requires_grad_(), x.clone().requires_grad_()
    out, want = ours(xo, ei), theirs(xp, ei)
    torch.testing.assert_close(out, want)
    out.sum().backward()
    want.sum().backward()
    torch.testing.assert_close(xo.grad, xp.grad)


@pytest.mark.parametrize("op", ["sqrt", "log", "rsqrt", "reciprocal", "pow"])
def test_no_nan_gradient_for_a_node_no_edge_reads(op):
    """An op whose slope is infinite at 0 on x_j: node 5 (isolated, zero
    features) is read by no edge, so PyG's gradient there is 0. Computed on
    the nodes before the gather it was 0 * inf = NaN."""
    fns = {"sqrt": torch.sqrt, "log": torch.log, "rsqrt": torch.rsqrt,
           "reciprocal": lambda v: 1.0 / v, "pow": lambda v: v ** 0.5}

    def message(self, x_j):
        return fns[op](x_j) * 2.0

    ours, theirs = _ours_and_pygs(message)
    ei, n = _graph()
    gen = torch.Generator().manual_seed(5)
    x = torch.rand(n, 3, generator=gen, dtype=torch.float64) + 0.5
    x[5] = 0.0
    x = x.to(DEVICE)
    xo, xp = x.clone().requires_grad_(), x.clone().requires_grad_()
    out, want = ours(xo, ei), theirs(xp, ei)
    torch.testing.assert_close(out, want)
    out.sum().backward()
    want.sum().backward()
    assert torch.equal(xp.grad[5], torch.zeros_like(xp.grad[5]))
    torch.testing.assert_close(xo.grad, xp.grad)


@pytest.mark.parametrize("body, what", [
    (lambda xj: torch.div(xj, 0.3, rounding_mode="floor"),
     r"div\(rounding_mode='floor'\) is not supported in traced code"),
    (lambda xj: xj.div(0.3, rounding_mode="trunc"),
     r"Tensor.div\(rounding_mode='trunc'\) is not supported in traced code"),
    (lambda xj: torch.exp(xj, out=xj), r"exp\(out=...\) writes in place"),
    (lambda xj: xj.sum(-1, keepdims=True).view(-1, 1) * xj,
     r"Tensor.sum with these arguments is not supported in traced code \(.*keepdims"),
], ids=["torch.div-floor", "Tensor.div-trunc", "out", "unknown-keyword"])
def test_arguments_the_tracer_does_not_honour_are_refused(body, what):
    # An argument the tracer does not honour is a TraceError at the user's
    # line, never dropped: torch.div's rounding_mode was dropped and a floor
    # division traced as a true one (a silently wrong result); an unknown
    # keyword raised a bare TypeError, which fallback="torch" did not catch.
    class Layer(gnnc.MessagePassing):
        def __init__(self, fallback=None):
            super().__init__(fallback=fallback)

        def forward(self, x, edge_index):
            return self.propagate(edge_index, x=x)

        def message(self, x_j):
            return body(x_j)
    ei, n = _graph()
    x = torch.randn(n, 3, dtype=torch.float64, device=DEVICE)
    with pytest.raises(gnnc.TraceError, match=what + r".*, at .*test_message_passing.py:\d+"):
        Layer()(x, ei)
    # fallback="torch" runs it in PyTorch, with PyTorch's meaning (or error).
    layer = Layer(fallback="torch")
    try:
        want = _scatter(body(x[ei[0]].clone()), ei[1], n)
    except (RuntimeError, TypeError) as e:  # (PyTorch's own refusal)
        with pytest.warns(gnnc.FallbackWarning), pytest.raises(type(e)):
            layer(x, ei)
        return
    with pytest.warns(gnnc.FallbackWarning):
        torch.testing.assert_close(layer(x, ei), want)


def test_pyg_api_gnnc_does_not_trace_is_refused_by_name():
    """edge_updater and PyG's propagate/message hooks raised a bare
    AttributeError; super().reset_parameters() (PyG layers call it) failed."""
    class Layer(gnnc.MessagePassing):
        def reset_parameters(self):
            super().reset_parameters()
    layer = Layer()
    layer.reset_parameters()
    with pytest.raises(NotImplementedError, match=r"Layer.edge_updater is not supported: "
                                                  r"compute the edge values inside message"):
        layer.edge_updater(None, alpha=None)
    for name in ("register_propagate_forward_pre_hook", "register_message_forward_hook"):
        with pytest.raises(NotImplementedError, match=rf"Layer.{name} is not supported"):
            getattr(layer, name)(print)


@pytest.mark.parametrize("value", [True, False, None])
def test_explain_switch(value):
    # PyG's `layer.explain = True` (masking each message by _edge_mask) was
    # stored and ignored: the messages went unmasked. Refused now; False and
    # None (PyG's default, off) are what gnnc does.
    class Layer(gnnc.MessagePassing):
        def forward(self, x, edge_index):
            return self.propagate(edge_index, x=x)
    layer = Layer()
    assert layer.explain is None
    if value is True:
        with pytest.raises(NotImplementedError, match=r"Layer.explain = True is not"):
            layer.explain = value
    else:
        layer.explain = value
    assert layer.explain is None
    ei, n = _graph()
    x = torch.randn(n, 2, device=DEVICE)
    torch.testing.assert_close(layer(x, ei), _scatter(x[ei[0]], ei[1], n))


class _WeightedSum(gnnc.MessagePassing):
    def forward(self, x, edge_index, edge_weight=None):
        return self.propagate(edge_index, x=x, edge_weight=edge_weight)

    def message(self, x_j, edge_weight):
        return x_j if edge_weight is None else edge_weight.view(-1, 1) * x_j


@pytest.mark.parametrize("aggr", ["sum", "max", "mean"])
@pytest.mark.parametrize("dynamic", [None, True], ids=["auto", "dynamic"])
def test_compiled_with_new_sizes(aggr, dynamic):
    """torch.compile(fullgraph=True) of a user layer over graphs of new node
    and edge counts, then new feature widths (dynamo's automatic dynamic
    shapes, or dynamic=True): the sizes were SymInts in the layer's cache
    key and trace (unhashable: 'Unsupported output type for
    nonstrict_trace-ed function' from the second size on). Outputs and
    gradients equal eager mode; new node counts compile no more."""
    from torch._dynamo.testing import CompileCounter
    layer = _WeightedSum(aggr)
    torch._dynamo.reset()
    counter = CompileCounter()
    f = torch.compile(layer, fullgraph=True, dynamic=dynamic, backend=counter)
    g = torch.Generator().manual_seed(0)
    sizes = [(12, 30, 4), (17, 45, 4), (23, 70, 4), (14, 36, 3), (14, 36, 5)]
    for k, (n, e, c) in enumerate(sizes):
        ei = torch.randint(0, n, (2, e), generator=g).to(DEVICE)
        x = torch.randn(n, c, generator=g, dtype=torch.float64).float().to(DEVICE)
        w = torch.rand(e, generator=g, dtype=torch.float64).float().to(DEVICE)
        x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
        out, want = f(x1, ei, w), layer(x2, ei, w)
        torch.testing.assert_close(out, want)
        out.sum().backward()
        want.sum().backward()
        torch.testing.assert_close(x1.grad, x2.grad)
        if k == 2:
            # Three node counts: one static and one dynamic compile at most.
            assert counter.frame_count <= (2 if dynamic is None else 1), counter.frame_count


# --------------------------------------------------------------------------
# What PyG's MessagePassing accepts beyond [N, C] features and float edge
# tensors: each compared with PyG's own MessagePassing (outputs, gradients).

class _Scalars:
    """One value per node (x of shape [N], node_dim=0): the message one value
    per edge, from x_j alone, times an [E] weight, or x_j - x_i."""

    def __init__(self, aggr, form):
        super().__init__(aggr=aggr, node_dim=0)
        self.form = form

    def forward(self, x, w, edge_index):
        return self.propagate(edge_index, x=x, w=w)

    def message(self, x_j, x_i, w):
        if self.form == "x_j":
            return x_j
        if self.form == "w * x_j":
            return w * x_j
        return torch.tanh(x_j - x_i) * w


class _GnncScalars(_Scalars, gnnc.MessagePassing):
    pass


class _PyGScalars(_Scalars, pyg_nn.MessagePassing):
    pass


def _compare_with_pyg(ours, theirs, tensors, *rest):
    """ours(*tensors, *rest) against theirs on clones: outputs and the
    gradients of the floating tensors."""
    def run(layer):
        args = [t.clone().requires_grad_() if t.is_floating_point() else t.clone()
                for t in tensors]
        out = layer(*args, *rest)
        out.backward(torch.linspace(-1, 1, out.numel(), dtype=out.dtype,
                                    device=out.device).view(out.shape))
        return out, [a.grad for a in args if a.is_floating_point()]
    got, got_grads = run(ours)
    want, want_grads = run(theirs)
    assert got.shape == want.shape
    torch.testing.assert_close(got, want)
    for g, w in zip(got_grads, want_grads):
        torch.testing.assert_close(g, w)


@pytest.mark.parametrize("aggr", ["sum", "mean", "max"])
@pytest.mark.parametrize("form", ["x_j", "w * x_j", "tanh(x_j - x_i) * w"])
def test_one_dimensional_features_match_pyg(aggr, form):
    """x of shape [N] (node_dim=0): PyG's messages are [E], its output [N].
    gnnc aggregates them as [E, 1] and returns [N] (it refused to compile:
    "'gnn.spmm' op expects input of rank at least 2")."""
    ei, n = _graph()
    x = torch.randn(n, dtype=torch.float64, device=DEVICE)
    w = torch.rand(ei.size(1), dtype=torch.float64, device=DEVICE) + 0.5
    _compare_with_pyg(_GnncScalars(aggr, form), _PyGScalars(aggr, form), [x, w], ei)


class _HalfPair:
    """PyG's half pair x=(x, None) (SAGEConv's form without a root): x_i is
    None in message; update gets the pair as passed."""

    def __init__(self):
        super().__init__(aggr="mean")

    def forward(self, x, edge_index):
        return self.propagate(edge_index, x=(x, None))

    def message(self, x_j, x_i):
        return torch.tanh(x_j) if x_i is None else x_j - x_i

    def update(self, aggr_out, x):
        return aggr_out * 2 + x[0] if x[1] is None else aggr_out


class _GnncHalfPair(_HalfPair, gnnc.MessagePassing):
    pass


class _PyGHalfPair(_HalfPair, pyg_nn.MessagePassing):
    pass


class _UsesMissingSide(gnnc.MessagePassing):
    def forward(self, x, edge_index):
        return self.propagate(edge_index, x=(x, None))

    def message(self, x_j, x_i):
        return x_j + x_i


def test_half_pair_matches_pyg():
    """x=(x, None): message gets x_i None as from PyG, outputs and gradients
    PyG's (the pair was refused as bipartite); a message that uses the
    missing side is refused naming it."""
    ei, n = _graph()
    x = torch.randn(n, 4, dtype=torch.float64, device=DEVICE)
    _compare_with_pyg(_GnncHalfPair(), _PyGHalfPair(), [x], ei)
    with pytest.raises(gnnc.TraceError, match=r"x_i \(propagate got x=\(x_src, None\)\) None"):
        _UsesMissingSide()(x, ei)


class _Masked:
    """An edge mask given to propagate (bool, or int 0 / 1), used as PyG
    layers use one."""

    def __init__(self, form):
        super().__init__(aggr="sum")
        self.form = form

    def forward(self, x, edge_index, mask):
        return self.propagate(edge_index, x=x, mask=mask)

    def message(self, x_j, x_i, mask):
        if self.form == "x_j * mask":
            return x_j * mask.unsqueeze(-1)
        if self.form == "to":
            return torch.tanh(x_j + x_i) * mask.to(x_j.dtype).view(-1, 1)
        return torch.where(mask.unsqueeze(-1), x_j, 0.5 * x_i)


class _GnncMasked(_Masked, gnnc.MessagePassing):
    pass


class _PyGMasked(_Masked, pyg_nn.MessagePassing):
    pass


@pytest.mark.parametrize("form, dtype", [
    ("x_j * mask", torch.bool), ("x_j * mask", torch.int64), ("to", torch.bool),
    ("to", torch.int64), ("where", torch.bool)])
def test_bool_and_int_edge_masks_match_pyg(form, dtype):
    """A bool / int [E] tensor given to propagate is an edge tensor in the
    features' dtype, as PyTorch promotes it (it was refused: "cannot be
    mixed with traced features"); a second mask reuses the traced
    function. Outputs and gradients PyG's."""
    ei, n = _graph()
    x = torch.randn(n, 4, dtype=torch.float64, device=DEVICE)
    ours, theirs = _GnncMasked(form), _PyGMasked(form)
    for seed in (0, 1):
        g = torch.Generator().manual_seed(seed)
        mask = (torch.rand(ei.size(1), generator=g) > 0.5).to(dtype).to(DEVICE)
        _compare_with_pyg(ours, theirs, [x], ei, mask)
