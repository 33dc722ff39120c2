"""gnnc.nn.GCN (the whole model as one gnn function) against PyTorch
Geometric's models.GCN (CPU, the reference evaluator).

PyG's weights loaded into gnnc's: the same outputs and gradients (x, every
weight and bias) in float32 and float64 over PyG's arguments, on a batch of
small graphs (disjoint union), a single graph, graphs with self-loops,
duplicate edges, isolated nodes, no edges and no nodes; edge weights;
dropout under a shared mask; gradcheck; the one-function structure; the
weight layout; the configurations run layer by layer (other activations,
norms, jumping knowledge, lazy, cached, sparse adjacencies, trimming); the
refused arguments and the input errors.
"""

import copy
import warnings

import pytest
import torch
import torch.nn.functional as F
import _parity
from _parity import backward_both, same_weights, tol, train_losses

try:
    import gnnc.nn as gnn
    from gnnc.nn import _common, _ir
except ImportError as e:  # the native core is not built here
    pytest.skip(f"gnnc is not importable: {e}", allow_module_level=True)
pyg_models = pytest.importorskip("torch_geometric.nn.models",
                                 reason="torch_geometric is not installed")

warnings.filterwarnings("ignore", category=FutureWarning)

IN, HID, OUT = 4, 5, 3


# --------------------------------------------------------------------------
# Graphs: (edge_index, num_nodes).


def molecules(sizes=(3, 5, 1, 4, 6), seed=1):
    """A PyG batch: the disjoint union of small random graphs (both edge
    directions, no self-loops), one of a single isolated node."""
    g = torch.Generator().manual_seed(seed)
    edges, first = [], 0
    for s in sizes:
        for i in range(1, s):  # a random tree, then one more edge
            j = int(torch.randint(0, i, (1,), generator=g))
            edges += [(first + i, first + j), (first + j, first + i)]
        if s > 2:
            edges += [(first, first + s - 1), (first + s - 1, first)]
        first += s
    return torch.tensor(edges, dtype=torch.long).t().contiguous(), first


def single():
    """One graph (a ring of 6 with a chord), no self-loops."""
    e = [(i, (i + 1) % 6) for i in range(6)] + [(0, 3)]
    e += [(b, a) for a, b in e]
    return torch.tensor(e, dtype=torch.long).t().contiguous(), 6


def tiny():
    """7 nodes: node 6 isolated, a self-loop at 1, a doubled self-loop at 2,
    a duplicate edge 0 -> 1, a hub 1."""
    edges = [(0, 1), (1, 2), (2, 0), (3, 1), (1, 1), (0, 1), (4, 5), (5, 4), (2, 2),
             (2, 2), (5, 1), (4, 1), (1, 3)]
    return torch.tensor(edges, dtype=torch.long).t().contiguous(), 7


def duplicates():
    """Duplicate edges, no self-loops, node 4 isolated."""
    edges = [(0, 1), (0, 1), (1, 0), (2, 3), (2, 3), (2, 3), (3, 0)]
    return torch.tensor(edges, dtype=torch.long).t().contiguous(), 5


def no_edges():
    return torch.zeros(2, 0, dtype=torch.long), 5


def no_nodes():
    return torch.zeros(2, 0, dtype=torch.long), 0


GRAPHS = {"molecules": molecules, "single": single, "self-loops": tiny,
          "duplicates": duplicates, "no-edges": no_edges, "no-nodes": no_nodes}


# --------------------------------------------------------------------------
# Models.

CASES = {
    "default": ((IN, HID, 3, OUT), {}),
    "out-none": ((IN, HID, 2), {}),
    "one-layer": ((IN, HID, 1, OUT), {}),
    "act-none": ((IN, HID, 3, OUT), dict(act=None)),
    "no-bias": ((IN, HID, 2, OUT), dict(bias=False)),
    "no-self-loops": ((IN, HID, 2, OUT), dict(add_self_loops=False)),
    "no-normalize": ((IN, HID, 2, OUT), dict(normalize=False, add_self_loops=False)),
    "target-to-source": ((IN, HID, 2, OUT), dict(flow="target_to_source")),
}


def make(case, dtype=torch.float32, seed=0):
    """(gnnc model, PyG model) with PyG's weights loaded into gnnc's."""
    args, kwargs = CASES[case] if isinstance(case, str) else case
    torch.manual_seed(seed)
    pyg = pyg_models.GCN(*args, **kwargs)
    ours = gnn.GCN(*args, **kwargs)
    return same_weights(ours, pyg, dtype)


def features(n, dtype, seed=2, channels=IN):
    return _parity.features(n, dtype, channels, seed)


def compare(ours, pyg, edge_index, n, dtype, edge_weight=None):
    """Outputs, then the gradients of x, every parameter (and the edge
    weights) for one random output gradient."""
    x = features(n, dtype)
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    extra1, extra2 = (), ()
    if edge_weight is not None:
        w1, w2 = edge_weight.clone().requires_grad_(), edge_weight.clone().requires_grad_()
        extra1, extra2 = (w1,), (w2,)
    out1 = ours(x1, edge_index, *extra1)
    out2 = pyg(x2, edge_index, *extra2)
    assert out1.shape == out2.shape
    torch.testing.assert_close(out1, out2, **tol(dtype))
    backward_both(out1, out2, x1, x2, dtype)
    theirs = dict(pyg.named_parameters())
    mine = dict(ours.named_parameters())
    assert sorted(mine) == sorted(theirs)
    for name, p in mine.items():
        if theirs[name].grad is None:  # (an activation that drops it)
            assert p.grad is None, name
            continue
        assert p.grad is not None, name
        torch.testing.assert_close(p.grad, theirs[name].grad, **tol(dtype), msg=name)
    if edge_weight is not None:
        torch.testing.assert_close(extra1[0].grad, extra2[0].grad, **tol(dtype))
    return out1


# --------------------------------------------------------------------------
# Parity with PyG.


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("graph", list(GRAPHS))
@pytest.mark.parametrize("case", list(CASES))
def test_matches_pyg(case, graph, dtype):
    ours, pyg = make(case, dtype)
    edge_index, n = GRAPHS[graph]()
    out = compare(ours, pyg, edge_index, n, dtype)
    if n:
        assert out.abs().sum() > 0  # not trivially equal


@pytest.mark.parametrize("graph", ["molecules", "self-loops", "duplicates"])
@pytest.mark.parametrize("kwargs", [{}, dict(improved=True), dict(add_self_loops=False),
                                    dict(normalize=False, add_self_loops=False)], ids=str)
def test_edge_weight_matches_pyg(kwargs, graph):
    ours, pyg = make(((IN, HID, 3, OUT), kwargs), torch.float64)
    edge_index, n = GRAPHS[graph]()
    w = torch.rand(edge_index.size(1), generator=torch.Generator().manual_seed(4),
                   dtype=torch.float64) + 0.1
    compare(ours, pyg, edge_index, n, torch.float64, edge_weight=w)
    # An [E, 1] column, as PyG takes it.
    compare(ours, pyg, edge_index, n, torch.float64, edge_weight=w.view(-1, 1))


@pytest.mark.parametrize("change", [
    ("convs.1", dict(add_self_loops=False)), ("convs.0", dict(normalize=False)),
    ("convs.1", dict(improved=True)), ("convs.2", dict(flow="target_to_source")),
    ("convs.1", dict(bias=False)), ("attr", dict(add_self_loops=False)),
], ids=str)
def test_layers_that_differ_from_the_first_run_as_pygs(change):
    # The one function reads its options from convs[0]: a layer replaced
    # (or changed) after the model was built made it compute the first
    # layer's options for every layer, silently (0.5 to 8 off), or refuse
    # a model whose layers differ in bias. Such models run layer by layer.
    where, kw = change
    ours, pyg = make(((IN, HID, 3, OUT), {}), torch.float64)
    for m in (ours, pyg):
        lib = gnn if m is ours else pytest.importorskip("torch_geometric.nn")
        if where == "attr":
            for k, v in kw.items():
                setattr(m.convs[1], k, v)
            continue
        i = int(where.split(".")[1])
        old = m.convs[i]
        torch.manual_seed(5)
        new = lib.GCNConv(old.in_channels, old.out_channels, **kw).double()
        m.convs[i] = new
    same_weights(ours, pyg, torch.float64)
    for graph in ("self-loops", "molecules"):
        edge_index, n = GRAPHS[graph]()
        compare(ours, pyg, edge_index, n, torch.float64)


def test_int32_edge_index_and_the_molecule_sizes():
    """QM9's shape: 16 -> 64 -> 64 -> 64 on a batch of molecules, an int32
    edge_index."""
    ours, pyg = make(((16, 64, 3, 64), {}))
    edge_index, n = molecules(sizes=(9, 7, 9, 5, 8, 9, 3), seed=8)
    x = features(n, torch.float32, channels=16)
    torch.testing.assert_close(ours(x, edge_index.int()), pyg(x, edge_index),
                               **tol(torch.float32))


def test_a_model_trains_like_pyg():
    """Three SGD steps on a batch of molecules: the same losses, the weights
    keeping their layout."""
    edge_index, n = molecules()
    x = features(n, torch.float64)
    y = torch.randint(0, OUT, (n,), generator=torch.Generator().manual_seed(7))
    ours, pyg = make("default", torch.float64)
    losses = []
    for m in (ours, pyg):
        losses.append(train_losses(m, lambda: m(x, edge_index), y, 3))
    assert losses[0] == pytest.approx(losses[1], rel=1e-10)
    assert len(set(losses[0])) == 3  # it did train
    for conv in ours.convs:
        assert conv.lin.weight.is_contiguous()


# --------------------------------------------------------------------------
# Dropout: PyG's F.dropout after the activation of every hidden layer.


def test_dropout_matches_pyg_under_the_same_masks(monkeypatch):
    edge_index, n = molecules()
    ours, pyg = make(((IN, HID, 3, OUT), dict(dropout=0.4)), torch.float64)
    masks = []
    draw = _common.attention_dropout_mask

    def recording(shape, p, dtype, device):
        masks.append(draw(shape, p, dtype, device))
        return masks[-1]

    monkeypatch.setattr(_common, "attention_dropout_mask", recording)
    x = features(n, torch.float64)
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    ours.train()
    out1 = ours(x1, edge_index)
    assert len(masks) == 2 and all(m.shape == (n, HID) for m in masks)
    assert (masks[0] == 0).any() and (masks[0] != 0).any()
    # PyG's forward with F.dropout replaced by the recorded masks.
    h = x2
    for i, conv in enumerate(pyg.convs):
        h = conv(h, edge_index)
        if i < 2:
            h = torch.relu(h) * masks[i]
    torch.testing.assert_close(out1, h, **tol(torch.float64))
    out1.sum().backward()
    h.sum().backward()
    torch.testing.assert_close(x1.grad, x2.grad, **tol(torch.float64))
    for (name, p), q in zip(ours.named_parameters(), pyg.parameters()):
        torch.testing.assert_close(p.grad, q.grad, **tol(torch.float64), msg=name)
    # Evaluation: no dropout, PyG's result.
    ours.eval()
    masks.clear()
    torch.testing.assert_close(ours(x, edge_index), pyg(x, edge_index))
    assert not masks


def test_dropout_one_drops_everything_after_the_first_layer():
    edge_index, n = single()
    ours, _ = make(((IN, HID, 2, OUT), dict(dropout=1.0, bias=False)), torch.float64)
    out = ours.train()(features(n, torch.float64), edge_index)
    assert not out.any()


# --------------------------------------------------------------------------
# gradcheck in float64.


@pytest.mark.parametrize("graph", ["single", "self-loops"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_gradcheck(graph, weighted):
    ours, _ = make(((IN, HID, 3, OUT), {}), torch.float64)
    edge_index, n = GRAPHS[graph]()
    if weighted and graph == "self-loops":
        # Not the doubled self-loop: PyG keeps one of its weights (an
        # index_put with a repeated index), whose gradient is PyG's
        # (test_edge_weight_matches_pyg) but not the numerical one.
        edge_index = edge_index[:, :-4]
    x = features(n, torch.float64).requires_grad_()
    names = [name for name, _ in ours.named_parameters()]
    params = tuple(p.detach().clone().requires_grad_() for _, p in ours.named_parameters())
    assert params[0].is_contiguous()  # PyG's layout
    w = (torch.rand(edge_index.size(1), generator=torch.Generator().manual_seed(4),
                    dtype=torch.float64) + 0.5).requires_grad_()

    def f(x, w, *ps):
        return torch.func.functional_call(
            ours, dict(zip(names, ps)), (x, edge_index, w if weighted else None))

    assert torch.autograd.gradcheck(f, (x, w, *params), eps=1e-6, atol=1e-6, rtol=1e-5)


# --------------------------------------------------------------------------
# One function for the whole model.


def test_the_model_is_one_function_with_every_matmul_inside(monkeypatch):
    calls = []
    propagate = _common.propagate

    def counting(layer, template, config, *args, **kw):
        calls.append((template, config))
        return propagate(layer, template, config, *args, **kw)

    monkeypatch.setattr(_common, "propagate", counting)
    ours, _ = make(((16, 64, 3, 64), {}))
    edge_index, n = molecules()
    ours(features(n, torch.float32, channels=16), edge_index)
    assert len(calls) == 1
    template, config = calls[0]
    text = getattr(_ir, template)(*config)[0].text()
    assert text.count("linalg.matmul") == 3
    assert text.count("gnn.spmm") == 3
    assert text.count("gnn.degree") == 1  # d^-1/2 once for every layer
    assert "gnn.reduce" not in text  # self-loops folded: no edge weights
    # Arguments: x, then (W, b) per layer, W as PyG stores it ([out, in]).
    sig = _common._FUNCTIONS[calls[0]].signature
    shapes = [a["shape"] for a in sig["args"][1:]]
    assert [a["kind"] for a in sig["args"][1:]][:2] == ["node", "dense"]
    assert shapes[1:] == [[64, 16], [64], [64, 64], [64], [64, 64], [64]]


def test_examples_gcn3_is_the_function_the_model_runs(monkeypatch):
    from gnnc.nn import _examples
    configs = []
    propagate = _common.propagate
    monkeypatch.setattr(_common, "propagate",
                        lambda m, t, c, *a, **k: configs.append(c) or propagate(m, t, c, *a, **k))
    ours, _ = make(((16, 64, 3, 64), {}))
    edge_index, n = molecules()
    ours(features(n, torch.float32, channels=16), edge_index)
    text = _ir.gcn_model(*configs[0])[0].text()
    assert text.replace("@gcn_model", "@gcn3") == _examples.gcn3().text()


def test_self_loops_mask_the_graph_instead_of_folding():
    """A loop-free graph folds the self-loops into the formula, one with
    loops masks them in the graph: decided per call from the graph (the
    second call here takes the first call's plan, models._GcnModelPlan),
    as gnnc.explain's record of the function run shows."""
    configs = []
    ours, _ = make("default")
    for graph in (single, tiny):
        edge_index, n = graph()
        ours(features(n, torch.float32), edge_index)
        configs.append(ours.__dict__["_gnnc_function"][1])
    (*_, weights1, _, fold1, _), (*_, weights2, _, fold2, _) = configs
    assert (weights1, fold1) == ("", True)
    assert (weights2, fold2) == ("mask", False)


# --------------------------------------------------------------------------
# The weight layout: PyG's shapes and layout, passed without a copy.


def test_weights_have_pygs_names_shapes_and_layout_and_pass_without_a_copy():
    ours, pyg = make("default")
    assert {k: v.shape for k, v in ours.state_dict().items()} == \
        {k: v.shape for k, v in pyg.state_dict().items()}
    for conv in ours.convs:
        w = conv.lin.weight
        assert w.is_contiguous()
        assert _common.cast(w.dtype, w) is w
    # What PyTorch code does with a model's parameters works as on PyG's
    # (a weight stored transposed made view(-1) raise).
    vec = torch.nn.utils.parameters_to_vector(ours.parameters())
    assert vec.numel() == sum(p.numel() for p in pyg.parameters())
    torch.nn.utils.vector_to_parameters(vec * 2, ours.parameters())
    assert all(p.view(-1).is_contiguous() for p in ours.parameters())
    ours.reset_parameters()
    assert all(c.lin.weight.is_contiguous() for c in ours.convs)


def test_initialisation_draws_pygs_values():
    # At construction and on reset, the same draws as PyG's.
    torch.manual_seed(3)
    pyg = pyg_models.GCN(IN, HID, 3, OUT)
    torch.manual_seed(3)
    ours = gnn.GCN(IN, HID, 3, OUT)
    for k, v in pyg.state_dict().items():
        torch.testing.assert_close(ours.state_dict()[k], v, rtol=0, atol=0, msg=k)
    torch.manual_seed(4)
    pyg.reset_parameters()
    torch.manual_seed(4)
    ours.reset_parameters()
    for k, v in pyg.state_dict().items():
        torch.testing.assert_close(ours.state_dict()[k], v, rtol=0, atol=0, msg=k)


def test_a_weight_replaced_by_a_transposed_one_still_works():
    # A parameter set by hand in another layout: copied for the call, still
    # PyG's result.
    ours, pyg = make("default")
    for conv in ours.convs:
        w = conv.lin.weight.detach()
        conv.lin.weight = torch.nn.Parameter(w.t().contiguous().t())
        assert not conv.lin.weight.is_contiguous()
    edge_index, n = molecules()
    compare(ours, pyg, edge_index, n, torch.float32)


# --------------------------------------------------------------------------
# Refused arguments and input errors.


class _DoubledReLU(torch.nn.ReLU):
    """A ReLU module that computes something else: not ReLU to the model."""

    def forward(self, x):
        return 2 * super().forward(x)


class _Zero(torch.nn.Identity):
    """An Identity module that computes something else."""

    def forward(self, x):
        return torch.zeros_like(x)


@pytest.mark.parametrize("make_model, match", [
    # A name PyG's resolver does not know either (PyG: ValueError).
    (lambda: gnn.GCN(IN, HID, 2, act="rleu"), "Could not resolve 'rleu'"),
    (lambda: gnn.GCN(IN, HID, 0), "num_layers must be a positive int"),
    (lambda: gnn.GCN(IN, 0, 2), "hidden_channels must be a positive int"),
    (lambda: gnn.GCN(IN, HID, 2, dropout=1.5), "dropout must be in"),
    (lambda: gnn.GCN(IN, HID, 2, jk="sum"), "jk must be None"),
])
def test_bad_arguments_raise_value_errors(make_model, match):
    with pytest.raises(ValueError, match=match):
        make_model()


@pytest.mark.parametrize("make_model, match", [
    (lambda: gnn.GCN(IN, HID, 2, aggr="mean"), "aggr"),
    (lambda: gnn.GCN(IN, HID, 2, unknown=3), "unknown"),
    (lambda: gnn.GCN(IN, HID, 2, norm="graph_norm"), "norm='graph_norm'"),
])
def test_refused_arguments_name_themselves(make_model, match):
    with pytest.raises(NotImplementedError, match=match):
        make_model()


# Configurations the one function does not cover: the layers run one by one
# (_BasicGNN), with PyG's result.
LAYERWISE = {
    "tanh": ((IN, HID, 3, OUT), dict(act="tanh")),
    "leaky-relu-kwargs": ((IN, HID, 3, OUT), dict(act="leaky_relu",
                                                   act_kwargs=dict(negative_slope=0.1))),
    "elu-module": ((IN, HID, 2, OUT), dict(act=torch.nn.ELU())),
    "tanh-function": ((IN, HID, 2, OUT), dict(act=torch.tanh)),
    "swish": ((IN, HID, 2, OUT), dict(act="swish")),
    "doubled-relu": ((IN, HID, 2, OUT), dict(act=_DoubledReLU())),
    "zero-identity": ((IN, HID, 2, OUT), dict(act=_Zero())),
    "batch-norm": ((IN, HID, 3, OUT), dict(norm="batch_norm")),
    "layer-norm-act-first": ((IN, HID, 3, OUT), dict(norm="layer_norm", act_first=True)),
    "jk-cat": ((IN, HID, 3, OUT), dict(jk="cat")),
    "jk-max": ((IN, HID, 2, OUT), dict(jk="max")),
    "jk-last-no-out": ((IN, HID, 2), dict(jk="last")),
    "cached": ((IN, HID, 2, OUT), dict(cached=True)),
}


def _layerwise_calls(monkeypatch):
    """The layers' node counts of each propagate call (one entry per call:
    [in, out] for a GCNConv, every layer's sizes for the whole model)."""
    calls = []
    propagate = _common.propagate
    monkeypatch.setattr(_common, "propagate",
                        lambda m, t, c, *a, **k: calls.append(list(c[0])) or propagate(m, t, c, *a, **k))
    return calls


@pytest.mark.parametrize("graph", ["molecules", "self-loops", "no-nodes"])
@pytest.mark.parametrize("case", list(LAYERWISE))
def test_layerwise_configurations_match_pyg(case, graph, monkeypatch):
    """PyG's GCN arguments the one function does not compute (other
    activations, norms, jumping knowledge, cached): gnnc's GCNConv layers
    one by one, PyG's outputs and gradients (norms in eval mode: their
    running statistics as PyG's)."""
    calls = _layerwise_calls(monkeypatch)
    ours, pyg = make(LAYERWISE[case], torch.float64)
    ours.eval(), pyg.eval()
    edge_index, n = GRAPHS[graph]()
    compare(ours, pyg, edge_index, n, torch.float64)
    if n:
        assert len(calls) == len(ours.convs) and all(len(c) == 2 for c in calls)


def test_layerwise_batch_norm_trains_like_pyg():
    """Training mode with a norm (batch statistics, running averages) and
    dropout 0: PyG's losses step by step, and the running statistics."""
    edge_index, n = molecules()
    x = features(n, torch.float64)
    y = torch.randint(0, OUT, (n,), generator=torch.Generator().manual_seed(7))
    ours, pyg = make(((IN, HID, 3, OUT), dict(norm="batch_norm", jk="cat")), torch.float64)
    losses = [train_losses(m, lambda: m(x, edge_index), y, 3) for m in (ours, pyg)]
    assert losses[0] == pytest.approx(losses[1], rel=1e-10)
    for k, v in pyg.state_dict().items():
        torch.testing.assert_close(ours.state_dict()[k], v, msg=k)


def test_lazy_in_channels_match_pyg_then_run_as_one_function(monkeypatch):
    calls = _layerwise_calls(monkeypatch)
    edge_index, n = molecules()
    x = features(n, torch.float64)
    torch.manual_seed(0)
    pyg = pyg_models.GCN(-1, HID, 2, OUT).double()
    ours = gnn.GCN(-1, HID, 2, OUT).double()
    pyg(x, edge_index)
    ours(x, edge_index)  # materialises the lazy weights: layer by layer
    assert calls == [[IN, HID], [HID, OUT]]
    ours.load_state_dict(pyg.state_dict())
    calls.clear()
    compare(ours, pyg, edge_index, n, torch.float64)
    assert calls == [[IN, HID, OUT]]  # now the one function


@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_sparse_adjacency_matches_pyg(layout):
    """adj_t (a torch.sparse tensor, transposed as PyG's): GCNConv's sparse
    path layer by layer; its values are the edge weights, as in PyG."""
    ours, pyg = make(((IN, HID, 3, OUT), {}), torch.float64)
    edge_index, n = single()
    w = torch.rand(edge_index.size(1), generator=torch.Generator().manual_seed(4),
                   dtype=torch.float64) + 0.1
    adj_t = torch.sparse_coo_tensor(edge_index.flip(0), w, (n, n)).coalesce()
    if layout == "csr":
        adj_t = adj_t.to_sparse_csr()
    x = features(n, torch.float64)
    torch.testing.assert_close(ours(x, adj_t), pyg(x, adj_t), **tol(torch.float64))


def test_trimmed_layers_match_pyg():
    """num_sampled_*_per_hop (PyG's trim_to_layer) with edge weights: the
    seeds' rows are PyG's."""
    ours, pyg = make(((IN, HID, 2, OUT), {}), torch.float64)
    g = torch.Generator().manual_seed(5)
    # seeds 0-3, hop 1 nodes 4-7, hop 2 nodes 8-11; hop k's edges point into
    # hop k - 1's nodes, listed hop by hop as the loader lists them.
    hop1 = torch.stack([torch.randint(4, 8, (8,), generator=g), torch.randint(0, 4, (8,), generator=g)])
    hop2 = torch.stack([torch.randint(8, 12, (8,), generator=g), torch.randint(4, 8, (8,), generator=g)])
    edge_index = torch.cat([hop1, hop2], dim=1)
    w = torch.rand(16, generator=g, dtype=torch.float64) + 0.1
    x = features(12, torch.float64)
    kw = dict(num_sampled_nodes_per_hop=[4, 4, 4], num_sampled_edges_per_hop=[8, 8])
    torch.testing.assert_close(ours(x, edge_index, w, **kw)[:4],
                               pyg(x, edge_index, w, **kw)[:4], **tol(torch.float64))


def test_supported_spellings_of_act():
    for act in ("relu", "ReLU", torch.nn.ReLU(), torch.relu, F.relu):
        assert gnn.GCN(IN, HID, 2, act=act).relu is True
    for act in (None, torch.nn.Identity()):
        assert gnn.GCN(IN, HID, 2, act=act).relu is False
    for act in ("tanh", _DoubledReLU(), _Zero(), torch.nn.ReLU6()):
        assert gnn.GCN(IN, HID, 2, act=act).relu is None


def test_act_identity_by_name_is_refused_as_pyg():
    """act='identity' is no name PyG's activation_resolver resolves
    (torch.nn.Identity is not in torch.nn.modules.activation): PyG's GCN
    raises a ValueError, and so does gnnc's."""
    with pytest.raises(ValueError, match="Could not resolve 'identity'"):
        pyg_models.GCN(IN, HID, 2, act="identity")
    for act in ("identity", "Identity"):
        with pytest.raises(ValueError, match=f"Could not resolve '{act}'"):
            gnn.GCN(IN, HID, 2, act=act)


def test_input_errors():
    ours = gnn.GCN(IN, HID, 2)
    edge_index, n = single()
    with pytest.raises(ValueError, match=f"expected x with {IN} channels"):
        ours(torch.randn(n, IN + 1), edge_index)
    with pytest.raises(TypeError, match="float64 but the layer's parameters are"):
        ours(torch.randn(n, IN, dtype=torch.float64), edge_index)
    with pytest.raises(ValueError, match=r"edge_weight of shape \[\d+\] \(one per edge, "
                                         r"or \[\d+, 1\]\), got shape \[3\]"):
        ours(torch.randn(n, IN), edge_index, torch.ones(3))
    with pytest.raises(ValueError, match="node id"):
        ours(torch.randn(n - 1, IN), edge_index)


def test_relu_gradient_at_zero_is_torchs():
    """Pre-activations exactly 0 (zero features, no bias): torch.relu's
    gradient there is 0, and so is gnnc's."""
    ours, pyg = make(((IN, HID, 2, OUT), dict(bias=False)), torch.float64)
    edge_index, n = molecules()
    x1 = torch.zeros(n, IN, dtype=torch.float64, requires_grad=True)
    x2 = torch.zeros(n, IN, dtype=torch.float64, requires_grad=True)
    ours(x1, edge_index).sum().backward()
    pyg(x2, edge_index).sum().backward()
    torch.testing.assert_close(x1.grad, x2.grad)
    assert not x1.grad.any()


# --------------------------------------------------------------------------
# torch.compile and the meta device.


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_no_graph_break_and_the_compiled_model_matches(weighted):
    ours, pyg = make("default", torch.float64)
    edge_index, n = molecules()
    x = features(n, torch.float64)
    w = (torch.rand(edge_index.size(1), generator=torch.Generator().manual_seed(4),
                    dtype=torch.float64) + 0.1) if weighted else None
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(ours)(x, edge_index, w)
    assert explanation.graph_break_count == 0, explanation.break_reasons
    compiled = torch.compile(ours, fullgraph=True)
    torch.testing.assert_close(compiled(x, edge_index, w), pyg(x, edge_index, w),
                               **tol(torch.float64))


@pytest.mark.parametrize("case", ["no-self-loops", "no-normalize"])
def test_no_graph_break_without_an_edge_tensor(case):
    # The op's configuration then names no edge tensor: "" (PyTorch 2.11's
    # non-strict tracing broke the graph on a None there).
    ours, pyg = make(case, torch.float64)
    edge_index, n = molecules()
    x = features(n, torch.float64)
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(ours)(x, edge_index)
    assert explanation.graph_break_count == 0, explanation.break_reasons
    compiled = torch.compile(ours, fullgraph=True)
    torch.testing.assert_close(compiled(x, edge_index), pyg(x, edge_index),
                               **tol(torch.float64))


def test_meta_tensors_give_shapes_forward_and_backward():
    model = gnn.GCN(IN, HID, 3, OUT, dropout=0.5).to("meta").train()
    edge_index, n = molecules()
    x = torch.empty(n, IN, device="meta", requires_grad=True)
    out = model(x, edge_index.to("meta"))
    assert out.shape == (n, OUT) and out.is_meta
    out.sum().backward()
    assert x.grad.shape == x.shape
    assert model.convs[0].lin.weight.grad.shape == (HID, IN)


def test_pygs_other_forward_arguments():
    """edge_attr, batch and batch_size change nothing in PyG's GCN (no norm):
    accepted and without effect; trim_to_layer's lists are checked."""
    ours, pyg = make("default")
    edge_index, n = molecules()
    x = features(n, torch.float32)
    extra = dict(edge_attr=torch.randn(edge_index.size(1), 2),
                 batch=torch.zeros(n, dtype=torch.long), batch_size=1)
    torch.testing.assert_close(ours(x, edge_index, **extra), pyg(x, edge_index, **extra))
    with pytest.raises(ValueError, match="num_sampled_nodes_per_hop must have an entry per hop"):
        ours(x, edge_index, num_sampled_nodes_per_hop=[n], num_sampled_edges_per_hop=[1])


# --------------------------------------------------------------------------
# The plan: a call after the first takes what the first decided
# (models._GcnModelPlan) unless something it read changed.


def test_the_models_plan_follows_every_change_to_the_model_and_its_inputs(monkeypatch):
    """Each step changes one thing on both libraries' models (or the
    inputs), compares the output and every gradient with PyG's in float64,
    and checks whether the call took the plan (GCN._one_function, the full
    path's walk over the model, not asked)."""
    asked = []
    one = gnn.GCN._one_function
    monkeypatch.setattr(gnn.GCN, "_one_function",
                        lambda self, *a: asked.append(1) or one(self, *a))
    ours, pyg = make("default", torch.float64)
    loop_free, n = molecules()
    loops, n_loops = tiny()

    def check(step, planned, graph=None, dtype=torch.float64, weight=None):
        edge_index, k = graph or (loop_free, n)
        asked.clear()
        ours.zero_grad(set_to_none=True), pyg.zero_grad(set_to_none=True)
        try:
            compare(ours, pyg, edge_index, k, dtype, weight)
        except AssertionError as e:
            raise AssertionError(f"{step}: {e}") from None
        assert (not asked) == planned, step

    def both(f):
        f(ours), f(pyg)

    check("first call", planned=False)
    check("and planned", planned=True)
    check("a graph with self-loops (masked, not folded)", planned=True, graph=(loops, n_loops))
    check("no edges", planned=True, graph=no_edges())
    check("no nodes", planned=True, graph=no_nodes())
    written = loop_free.clone()
    check("a new edge_index", planned=True, graph=(written, n))
    written[1, 0] = (int(written[1, 0]) + 1) % n  # (through PyTorch: version counter)
    check("its ids written in place", planned=True, graph=(written, n))
    with torch.no_grad():
        both(lambda m: m.convs[0].lin.weight.add_(0.5))
        both(lambda m: m.convs[2].bias.sub_(0.25))
    check("weights and a bias written in place", planned=True)
    w = torch.rand(loop_free.size(1), generator=torch.Generator().manual_seed(5),
                   dtype=torch.float64) + 0.1
    check("edge weights", planned=False, weight=w)
    check("none again: decided again", planned=False)
    check("and planned", planned=True)
    # Whatever makes the model run its layers one by one.
    handles = [m.convs[1].register_forward_hook(lambda *a: None) for m in (ours, pyg)]
    check("a hook on a layer", planned=False)
    for h in handles:
        h.remove()
    check("hook removed", planned=False)
    check("and planned", planned=True)
    handles = [m.dropout.register_forward_pre_hook(lambda *a: None) for m in (ours, pyg)]
    check("a hook on the dropout", planned=False)
    for h in handles:
        h.remove()
    check("hook removed", planned=False)
    glob = torch.nn.modules.module.register_module_forward_hook(lambda *a: None)
    try:
        check("a global module hook", planned=False)
    finally:
        glob.remove()
    check("removed", planned=False)
    both(lambda m: setattr(m, "act", torch.nn.Tanh()))
    check("another activation", planned=False)
    both(lambda m: setattr(m, "act", torch.nn.ReLU()))
    check("ReLU again (another module)", planned=False)
    check("and planned", planned=True)
    both(lambda m: setattr(m.convs[1], "add_self_loops", False))
    check("a layer's option changed", planned=False)
    both(lambda m: setattr(m.convs[1], "add_self_loops", True))
    check("and back", planned=False)
    check("and planned", planned=True)
    both(lambda m: m.convs.__setitem__(1, copy.deepcopy(m.convs[1])))
    check("a layer replaced", planned=False)
    check("and planned", planned=True)
    kept = [m.convs[2].bias for m in (ours, pyg)]
    both(lambda m: setattr(m.convs[2], "bias", None))
    check("a bias removed (layer by layer)", planned=False)
    for m, b in zip((ours, pyg), kept):
        m.convs[2].bias = torch.nn.Parameter(b.detach().clone())
    check("a new bias", planned=False)
    check("and planned", planned=True)
    both(lambda m: m.float())
    check("float32", planned=False, dtype=torch.float32)
    check("and planned", planned=True, dtype=torch.float32)
    both(lambda m: m.double())
    check("float64 again", planned=False)
    # Bad inputs after a plan: the full path's errors.
    with pytest.raises(ValueError):
        ours(features(n, torch.float64, channels=IN + 1), loop_free)
    with pytest.raises(TypeError):
        ours(features(n, torch.float32), loop_free)
    with pytest.raises(ValueError, match="out of range|outside"):
        ours(features(n, torch.float64), torch.tensor([[0, n + 3], [1, 0]]))
    check("the plan still stands", planned=True)
    # A hook on a layer's lin is refused after a plan as before it.
    handle = ours.convs[0].lin.register_forward_hook(lambda *a: None)
    with pytest.raises(NotImplementedError, match="'lin' .*has a hook"):
        ours(features(n, torch.float64), loop_free)
    handle.remove()
    check("hook removed", planned=False)
    check("and planned", planned=True)
    # Copies decide anew.
    clone = copy.deepcopy(ours)
    assert clone.__dict__.get("_gnnc_plan") is None
    assert ours.__dict__.get("_gnnc_plan") is not None


def test_the_models_plan_reads_the_dropout_on_every_call(monkeypatch):
    """The dropout's `p` and mode are read on every planned call: masks are
    drawn in training mode with p > 0 and not otherwise, and an eval call
    equals PyG's."""
    edge_index, n = molecules()
    ours, pyg = make("default", torch.float64)
    x = features(n, torch.float64)
    masks = []
    draw = _common.attention_dropout_mask
    monkeypatch.setattr(_common, "attention_dropout_mask",
                        lambda *a: masks.append(a) or draw(*a))
    ours.eval(), pyg.eval()
    want = pyg(x, edge_index)
    for _ in range(2):
        torch.testing.assert_close(ours(x, edge_index), want, **tol(torch.float64))
    assert ours.__dict__.get("_gnnc_plan") is not None and not masks
    ours.train()
    ours.dropout.p = 0.5
    got = ours(x, edge_index)
    assert len(masks) == 2 and masks[0][:2] == ((n, HID), 0.5)
    assert not torch.allclose(got, want)
    ours.dropout.p = 0.0
    masks.clear()
    torch.testing.assert_close(ours(x, edge_index), want, **tol(torch.float64))
    assert not masks
    assert ours.__dict__.get("_gnnc_plan") is not None


# --------------------------------------------------------------------------
# Hooks: PyG's GCN calls every layer, activation and dropout.


@pytest.mark.parametrize("where", ["convs.0", "convs.1", "act", "dropout"])
def test_hooks_on_the_layers_run_as_in_pyg(where):
    """A forward hook on a layer (how a layer's output is usually read) is
    called with PyG's output, and hooks that change a layer's input or
    output change the model's result as in PyG: the model runs its layers
    one by one then. (It ran one gnn function and skipped them.)"""
    edge_index, n = tiny()
    x = features(n, torch.float64)
    ours, pyg = make("default", torch.float64)
    seen = {}
    for tag, model in (("ours", ours), ("pyg", pyg)):
        part = model.get_submodule(where)
        part.register_forward_hook(lambda m, a, out, tag=tag: seen.setdefault(tag, out))
        part.register_forward_pre_hook(lambda m, a: (a[0] * 2,) + tuple(a[1:]))
        part.register_forward_hook(lambda m, a, out: out - 0.25)
    out, want = ours(x, edge_index), pyg(x, edge_index)
    torch.testing.assert_close(seen["ours"], seen["pyg"], **tol(torch.float64))
    torch.testing.assert_close(out, want, **tol(torch.float64))


def test_a_hook_on_a_layers_lin_is_refused():
    """gnnc reads `lin.weight` without calling `lin`: a hook there cannot be
    honoured and is refused, naming it."""
    edge_index, n = tiny()
    ours, _ = make("default", torch.float64)
    ours.convs[1].lin.register_forward_pre_hook(lambda m, a: (a[0] * 2,))
    with pytest.raises(NotImplementedError, match="GCNConv: 'lin' .*has a hook"):
        ours(features(n, torch.float64), edge_index)


def test_a_bias_on_a_layers_lin_is_refused():
    """A layer's `lin` replaced by a torch.nn.Linear (bias on): PyG's GCN
    adds that bias; the one gnn function read `lin.weight` only and dropped
    it (0.33 off). The layers then run one by one, and GCNConv refuses it,
    naming it."""
    edge_index, n = tiny()
    ours, _ = make("default", torch.float64)
    ours.convs[1].lin = torch.nn.Linear(ours.convs[1].lin.weight.size(1),
                                        ours.convs[1].lin.weight.size(0)).double()
    with pytest.raises(NotImplementedError, match="GCNConv: 'lin' has a bias"):
        ours(features(n, torch.float64), edge_index)


@pytest.mark.parametrize("change", ["mc-dropout", "dropout-eval", "identity", "alpha"])
def test_the_dropout_module_decides_as_in_pyg(change):
    """PyG's GCN calls its `dropout` module: its own mode and kind decide.
    The one gnn function read the model's mode and `dropout.p`: MC dropout
    (an eval model, its dropout training) dropped nothing, a dropout module
    in eval mode in a training model still dropped (0.44 off), AlphaDropout
    ran as Dropout, and an Identity in its place raised AttributeError."""
    edge_index, n = tiny()
    ours, pyg = make("default", torch.float64)
    x = features(n, torch.float64)
    for model in (ours, pyg):
        model.dropout.p = 0.5
        if change == "mc-dropout":
            model.eval()
            model.dropout.train()
        elif change == "dropout-eval":
            model.train()
            model.dropout.eval()
        elif change == "identity":
            model.train()
            model.dropout = torch.nn.Identity()
        else:
            model.train()
            model.dropout = torch.nn.AlphaDropout(0.5)
    torch.manual_seed(3)
    got = ours(x, edge_index)
    torch.manual_seed(3)
    want = pyg(x, edge_index)
    torch.testing.assert_close(got, want, **tol(torch.float64))
    if change == "mc-dropout":  # (and it does drop)
        ours.dropout.eval()
        assert not torch.allclose(ours(x, edge_index), got)
