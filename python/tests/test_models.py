"""gnnc.nn.GraphSAGE, GIN and GAT (PyG's BasicGNN models over gnnc.nn's
layers) against PyTorch Geometric's models of those names (CPU, the
reference evaluator).

PyG's state dict loaded into gnnc's (the same keys, in the same order, and
shapes; and back): the same outputs and gradients (x, every parameter) in
float64 and float32 over a grid of PyG's arguments (num_layers 1-3,
out_channels, norm None / batch_norm / layer_norm with and without `batch`,
jk None / last / cat / max / lstm, act_first, GAT's heads / concat / v2),
in eval mode and in training mode (dropout under one seed, BatchNorm's batch
statistics and running statistics); PyG's initialisation under one seed;
lazy in_channels; activation and norm arguments; torch.compile without a
graph break; the refused arguments.
"""

import itertools
import types
import warnings

import pytest
import torch
import _parity
from _parity import tol

try:
    import gnnc.nn as gnn
    from gnnc.nn import _common
except ImportError as e:  # the native core is not built here
    pytest.skip(f"gnnc is not importable: {e}", allow_module_level=True)
pyg_models = pytest.importorskip("torch_geometric.nn.models",
                                 reason="torch_geometric is not installed")

warnings.filterwarnings("ignore", category=FutureWarning)

IN, HID, OUT = 4, 6, 3
MODELS = ("GraphSAGE", "GIN", "GAT")


def molecules(sizes=(3, 5, 1, 4, 6), seed=1):
    """A PyG batch of small random graphs (both edge directions, no
    self-loops, one isolated node): (edge_index, batch)."""
    g = torch.Generator().manual_seed(seed)
    edges, batch, first = [], [], 0
    for k, s in enumerate(sizes):
        for i in range(1, s):
            j = int(torch.randint(0, i, (1,), generator=g))
            edges += [(first + i, first + j), (first + j, first + i)]
        if s > 2:
            edges += [(first, first + s - 1), (first + s - 1, first)]
        batch += [k] * s
        first += s
    return (torch.tensor(edges, dtype=torch.long).t().contiguous(),
            torch.tensor(batch, dtype=torch.long))


def features(n, dtype, seed=2, channels=IN):
    return _parity.features(n, dtype, channels, seed)


def grid():
    """(model, num_layers, out_channels, norm, jk, kwargs) for every model
    and every num_layers x out_channels x norm x jk; act_first and (for
    GAT) heads, concat and v2 vary along the grid."""
    cases = []
    for model in MODELS:
        combos = itertools.product((1, 2, 3), (None, OUT), (None, "batch_norm", "layer_norm"),
                                   (None, "last", "cat", "max"))
        for k, (layers, out, norm, jk) in enumerate(combos):
            kw = dict(act_first=bool(k % 2))
            if model == "GAT":
                kw.update(heads=(1, 2, 3)[k % 3], v2=bool(k // 3 % 2),
                          concat=bool(k // 6 % 2 == 0))
            cases.append((model, layers, out, norm, jk, kw))
    return cases


GRID = grid()


def case_id(case):
    model, layers, out, norm, jk, kw = case
    extra = "".join(f"-{k}={v}" for k, v in kw.items())
    return f"{model}-L{layers}-out{out}-{norm}-jk{jk}{extra}"


def make(model, args, kwargs, dtype=torch.float64, seed=0):
    """(gnnc model, PyG model), PyG's parameters (biases, norm affines and
    the LSTM's drawn at random so that none is trivially 0 or 1) loaded into
    gnnc's; both in `dtype`, in eval mode."""
    torch.manual_seed(seed)
    pyg = getattr(pyg_models, model)(*args, **kwargs)
    ours = getattr(gnn, model)(*args, **kwargs)
    assert list(ours.state_dict()) == list(pyg.state_dict())
    for (k, a), b in zip(ours.state_dict().items(), pyg.state_dict().values()):
        assert a.shape == b.shape and a.dtype == b.dtype, k
    with torch.no_grad():  # BatchNorm's running statistics away from 0 and 1
        for k, b in pyg.named_buffers():
            if k.endswith(("running_mean", "running_var")):
                b.uniform_(0.5, 1.5)
    return _parity.same_weights(ours, pyg, dtype,
                                randomise=lambda name: not name.endswith("weight")
                                or ".norms." in name or name.startswith("norms."))


class _AttentionMasks:
    """One shared attention-dropout mask per GAT layer call (the k-th call
    of both models gets the k-th mask): gnnc's `attention_dropout_mask` and
    PyG's `F.dropout` inside GATConv / GATv2Conv (on a graph without
    self-loops, whose edges PyG keeps in gnnc's order), so training mode
    can be compared."""

    def __init__(self, monkeypatch):
        from torch_geometric.nn.conv import gat_conv, gatv2_conv
        self.ours, self.theirs = 0, 0
        monkeypatch.setattr(_common, "attention_dropout_mask", self.mask_for_gnnc)
        proxy = types.SimpleNamespace(**{k: getattr(torch.nn.functional, k)
                                         for k in dir(torch.nn.functional)
                                         if not k.startswith("__")})
        proxy.dropout = self.dropout_for_pyg
        monkeypatch.setattr(gat_conv, "F", proxy)
        monkeypatch.setattr(gatv2_conv, "F", proxy)

    @staticmethod
    def mask(k, shape, p):
        g = torch.Generator().manual_seed(100 + k)
        return (torch.rand(*shape, generator=g, dtype=torch.float64) > p).double() / (1 - p)

    def mask_for_gnnc(self, shape, p, dtype, device):
        self.ours += 1
        return self.mask(self.ours, shape, p).to(dtype)

    def dropout_for_pyg(self, input, p=0.5, training=True, inplace=False):
        if not training or p == 0:
            return input
        self.theirs += 1
        return input * self.mask(self.theirs, input.shape, p).to(input.dtype)


def run_both(ours, pyg, dtype, train, seed=5, with_batch=False, **extra):
    """Outputs, then the gradients of x and every parameter for one random
    output gradient; in training mode each forward draws its dropout under
    the same seed."""
    edge_index, batch = molecules()
    n = batch.numel()
    x = features(n, dtype)
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    kw = dict(batch=batch) if with_batch else {}
    kw.update(extra)
    ours.train(train), pyg.train(train)
    torch.manual_seed(seed)
    out1 = ours(x1, edge_index, **kw)
    torch.manual_seed(seed)
    out2 = pyg(x2, edge_index, **kw)
    assert out1.shape == out2.shape and out1.dtype == out2.dtype
    torch.testing.assert_close(out1, out2, **tol(dtype))
    assert out1.abs().sum() > 0  # not trivially equal
    # (and the buffers: BatchNorm's running statistics in training mode)
    _parity.same_model_gradients(ours, pyg, out1, out2, x1, x2, dtype)
    return out1


# --------------------------------------------------------------------------
# Parity with PyG over the grid.


@pytest.mark.parametrize("case", GRID, ids=[case_id(c) for c in GRID])
def test_matches_pyg_eval_float64(case):
    model, layers, out, norm, jk, kw = case
    ours, pyg = make(model, (IN, HID, layers, out), dict(kw, norm=norm, jk=jk, dropout=0.3))
    run_both(ours, pyg, torch.float64, train=False, with_batch=layers % 2 == 1)


@pytest.mark.parametrize("case", GRID, ids=[case_id(c) for c in GRID])
def test_matches_pyg_training_float64(case, monkeypatch):
    """Training mode: feature dropout drawn under one seed by both models
    (the same torch.nn.Dropout calls), GAT's attention dropout under shared
    masks, BatchNorm's batch statistics and running-statistics updates."""
    model, layers, out, norm, jk, kw = case
    if model == "GAT":
        masks = _AttentionMasks(monkeypatch)
    ours, pyg = make(model, (IN, HID, layers, out), dict(kw, norm=norm, jk=jk, dropout=0.3))
    run_both(ours, pyg, torch.float64, train=True, with_batch=layers % 2 == 0)
    if model == "GAT":
        assert masks.ours == masks.theirs == layers


@pytest.mark.parametrize("case", GRID[::5], ids=[case_id(c) for c in GRID[::5]])
def test_matches_pyg_float32(case):
    model, layers, out, norm, jk, kw = case
    ours, pyg = make(model, (IN, HID, layers, out), dict(kw, norm=norm, jk=jk),
                     torch.float32)
    run_both(ours, pyg, torch.float32, train=False, with_batch=True)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
def test_jk_lstm(model, train):
    ours, pyg = make(model, (IN, HID, 3, OUT), dict(jk="lstm", norm="batch_norm"))
    run_both(ours, pyg, torch.float64, train=train)


# --------------------------------------------------------------------------
# Arguments.

ARGUMENTS = {
    "act-name-kwargs": dict(act="leaky_relu", act_kwargs=dict(negative_slope=0.3)),
    "act-prelu": dict(act="PReLU"),  # a parameter, shared with GIN's MLPs
    "act-module": dict(act=torch.nn.ELU()),
    "act-function": dict(act=torch.tanh),
    "act-swish": dict(act="swish"),
    "act-none": dict(act=None),
    "batch-norm-kwargs": dict(norm="BatchNorm", norm_kwargs=dict(momentum=0.3, eps=1e-3)),
    "batch-norm-no-affine": dict(norm="batch", norm_kwargs=dict(affine=False)),
    "layer-norm-node": dict(norm="layer_norm", norm_kwargs=dict(mode="node")),
    "layer-norm-no-affine": dict(norm="layer_norm", norm_kwargs=dict(affine=False)),
    "norm-module": dict(norm=torch.nn.LayerNorm(HID)),
}
CONV_KWARGS = {
    "GraphSAGE": [dict(aggr="max"), dict(aggr="sum", normalize=True, root_weight=False),
                  dict(project=True, bias=False)],
    "GIN": [dict(train_eps=True, eps=0.25), dict(eps=-0.5)],
    "GAT": [dict(heads=2, concat=False), dict(heads=2, v2=True, share_weights=True),
            dict(heads=3, negative_slope=0.1, add_self_loops=False),
            dict(heads=2, residual=True), dict(heads=2, bias=False, v2=True)],
}


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("name", list(ARGUMENTS))
@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
def test_activation_and_norm_arguments(model, name, train, monkeypatch):
    if model == "GAT":
        _AttentionMasks(monkeypatch)
    ours, pyg = make(model, (IN, HID, 2, OUT),
                     dict(ARGUMENTS[name], dropout=0.2, jk="cat"))
    run_both(ours, pyg, torch.float64, train=train, with_batch=True)


@pytest.mark.parametrize("model,kwargs", [(m, k) for m, ks in CONV_KWARGS.items() for k in ks],
                         ids=[f"{m}-{i}" for m, ks in CONV_KWARGS.items()
                              for i in range(len(ks))])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
def test_conv_keywords_reach_every_layer(model, kwargs, dtype):
    ours, pyg = make(model, (IN, HID, 3, OUT), kwargs, dtype)
    run_both(ours, pyg, dtype, train=False)


@pytest.mark.parametrize("v2", [False, True])
def test_gat_edge_attr(v2):
    ours, pyg = make("GAT", (IN, HID, 2, OUT), dict(heads=2, edge_dim=2, v2=v2))
    edge_index, _ = molecules()
    e = _parity.features(edge_index.size(1), torch.float64, 2, seed=7)
    run_both(ours, pyg, torch.float64, train=False, edge_attr=e)


@pytest.mark.parametrize("model", ["GraphSAGE", "GIN"])
def test_edge_attr_and_edge_weight_have_no_effect_as_in_pyg(model):
    """PyG's GraphSAGE and GIN pass neither to their layers (GAT passes no
    edge_weight): accepted, without effect."""
    ours, pyg = make(model, (IN, HID, 2, OUT), {})
    edge_index, _ = molecules()
    w = torch.rand(edge_index.size(1), dtype=torch.float64)
    run_both(ours, pyg, torch.float64, train=False, edge_weight=w, edge_attr=w[:, None])


def test_batch_size_reaches_layer_norm():
    ours, pyg = make("GIN", (IN, HID, 2, OUT), dict(norm="layer_norm"))
    # One more graph than `batch` names: an empty one.
    run_both(ours, pyg, torch.float64, train=False, with_batch=True, batch_size=6)


def test_pair_in_channels():
    ours, pyg = make("GraphSAGE", ((IN, IN), HID, 2, OUT), {})
    run_both(ours, pyg, torch.float64, train=False)
    ours, pyg = make("GAT", ((IN, IN), HID, 2, OUT), dict(heads=2))
    edge_index, batch = molecules()
    x = features(batch.numel(), torch.float64)
    torch.testing.assert_close(ours((x, x), edge_index), pyg((x, x), edge_index),
                               **tol(torch.float64))


@pytest.mark.parametrize("model", MODELS)
def test_lazy_in_channels(model):
    """in_channels=-1: sized by the first input, with PyG's weights for one
    seed; a called PyG model's state dict loads into gnnc's lazy one."""
    kwargs = dict(heads=2) if model == "GAT" else {}
    edge_index, batch = molecules()
    x = features(batch.numel(), torch.float64)
    torch.manual_seed(0)
    pyg = getattr(pyg_models, model)(-1, HID, 2, OUT, **kwargs).double()
    torch.manual_seed(0)
    ours = getattr(gnn, model)(-1, HID, 2, OUT, **kwargs).double()
    torch.manual_seed(1)
    want = pyg(x, edge_index)
    torch.manual_seed(1)
    torch.testing.assert_close(ours(x, edge_index), want, **tol(torch.float64))
    fresh = getattr(gnn, model)(-1, HID, 2, OUT, **kwargs).double()
    fresh.load_state_dict(pyg.state_dict())
    torch.testing.assert_close(fresh(x, edge_index), want, **tol(torch.float64))


# --------------------------------------------------------------------------
# State dict, initialisation, reset_parameters, repr.


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("jk", [None, "cat", "lstm"])
def test_initialisation_reset_and_state_dict_both_ways(model, jk):
    kwargs = dict(jk=jk, norm="batch_norm", act="prelu")
    if model == "GAT":
        kwargs["heads"] = 2
    torch.manual_seed(0)
    pyg = getattr(pyg_models, model)(IN, HID, 3, OUT, **kwargs)
    torch.manual_seed(0)
    ours = getattr(gnn, model)(IN, HID, 3, OUT, **kwargs)
    assert repr(ours) == repr(pyg)

    def same_state():
        a, b = ours.state_dict(), pyg.state_dict()
        assert list(a) == list(b)
        for k in a:
            assert torch.equal(a[k], b[k]), k

    same_state()
    # reset_parameters draws what PyG's draws for one seed.
    torch.manual_seed(3)
    ours.reset_parameters()
    torch.manual_seed(3)
    pyg.reset_parameters()
    same_state()
    # gnnc's weights load into PyG's model.
    with torch.no_grad():
        for p in ours.parameters():
            p.uniform_(-1, 1)
    pyg.load_state_dict(ours.state_dict())
    edge_index, batch = molecules()
    x = features(batch.numel(), torch.float32)
    ours.eval(), pyg.eval()
    torch.testing.assert_close(ours(x, edge_index), pyg(x, edge_index),
                               **tol(torch.float32))


def test_gin_nn_is_pygs_mlp():
    ours = gnn.GIN(IN, HID, 2, OUT, norm="layer_norm")
    pyg = pyg_models.GIN(IN, HID, 2, OUT, norm="layer_norm")
    assert repr(ours.convs[0].nn) == repr(pyg.convs[0].nn)
    assert repr(ours.convs[1]) == repr(pyg.convs[1])


GIN_FOLDS = {
    # (model keywords): each layer's folded (out, bias, relu) maps.
    "plain": (dict(), ((HID, True, True), (HID, True, False))),
    "no-act": (dict(act=None), ((HID, True, False), (HID, True, False))),
    "batch-norm": (dict(norm="batch_norm"), ((HID, True, False),)),
    "layer-norm-act-first": (dict(norm="layer_norm", act_first=True), ((HID, True, True),)),
    "elu": (dict(act="elu"), ((HID, True, False),)),
}


@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
@pytest.mark.parametrize("name", list(GIN_FOLDS))
def test_gin_layers_fold_their_mlps_leading_layers(name, train):
    """Each GINConv of gnnc.nn.GIN takes its MLP's first Linear into its gnn
    function, the ReLU where it comes before the norm or there is none, the
    second Linear where nothing lies between (GINConv's fold): one op
    forward and one backward where the MLP has no norm. Outputs and
    gradients equal PyG's."""
    kwargs, layers = GIN_FOLDS[name]
    ours, pyg = make("GIN", (IN, HID, 2), dict(kwargs, dropout=0.2))
    run_both(ours, pyg, torch.float64, train=train, with_batch=True)
    for conv in ours.convs:
        assert conv.__dict__["_gnnc_function"][0] == "gin_layer"
        assert conv.__dict__["_gnnc_function"][1][1] == layers


# --------------------------------------------------------------------------
# Refused and wrong arguments.


@pytest.mark.parametrize("model", MODELS)
def test_refused_arguments(model):
    cls = getattr(gnn, model)
    with pytest.raises(NotImplementedError, match="norm='graph_norm'"):
        cls(IN, HID, 2, norm="graph_norm")
    with pytest.raises(NotImplementedError, match="InstanceNorm"):
        cls(IN, HID, 2, norm="InstanceNorm")
    with pytest.raises(ValueError, match="Could not resolve 'nonorm'"):
        cls(IN, HID, 2, norm="nonorm")
    with pytest.raises(ValueError, match="Could not resolve 'noact'"):
        cls(IN, HID, 2, act="noact")
    with pytest.raises(ValueError, match="jk must be"):
        cls(IN, HID, 2, jk="sum")
    with pytest.raises(ValueError, match="num_layers"):
        cls(IN, HID, 0)
    with pytest.raises(ValueError, match="hidden_channels"):
        cls(IN, 0, 2)
    ours = cls(IN, HID, 2)
    edge_index, batch = molecules()
    x = features(batch.numel(), torch.float32)
    # trim_to_layer's lists must describe the batch (test_inference.py).
    with pytest.raises(ValueError, match="add up to 3 nodes and 1 edges"):
        ours(x, edge_index, num_sampled_nodes_per_hop=[1, 2], num_sampled_edges_per_hop=[1])


def test_layer_arguments_are_checked_by_the_layers():
    with pytest.raises(NotImplementedError, match="aggr='lstm'"):
        gnn.GraphSAGE(IN, HID, 2, aggr="lstm")
    with pytest.raises(NotImplementedError, match="aggr"):
        gnn.GIN(IN, HID, 2, aggr="mean")
    with pytest.raises(ValueError, match="divisible by the number of heads"):
        gnn.GAT(IN, 5, 2, heads=2)
    with pytest.raises(TypeError, match="in_channels must be an int"):
        gnn.GIN((IN, IN), HID, 2)
    with pytest.raises(ValueError, match="mode must be 'graph' or 'node'"):
        gnn.GIN(IN, HID, 2, norm="layer_norm", norm_kwargs=dict(mode="edge"))


# --------------------------------------------------------------------------
# torch.compile.

COMPILED = {
    "GraphSAGE": dict(norm="batch_norm", jk="cat"),
    "GIN": dict(norm="layer_norm", jk="max", train_eps=True),
    "GAT": dict(heads=2, v2=True, norm="batch_norm"),
}


@pytest.mark.parametrize("model", MODELS)
def test_no_graph_break_and_the_compiled_model_matches(model):
    ours, pyg = make(model, (IN, HID, 3, OUT), COMPILED[model])
    edge_index, batch = molecules()
    x = features(batch.numel(), torch.float64)
    # GIN's layer_norm normalises per graph: with batch_size, no read back.
    kw = dict(batch=batch, batch_size=int(batch.max()) + 1)
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(ours)(x, edge_index, **kw)
    assert explanation.graph_break_count == 0, explanation.break_reasons
    compiled = torch.compile(ours, fullgraph=True)
    torch.testing.assert_close(compiled(x, edge_index, **kw), pyg(x, edge_index, **kw),
                               **tol(torch.float64))
