"""gnnc.nn under torch.autocast (docs/Python.md, "Mixed precision").

Under autocast a layer's gnnc op runs in the autocast dtype, every floating
tensor it reads cast to it (as autocast casts a linear's operands). Each
layer, in bfloat16 and float16, runs with PyG's weights next to PyG's own
layer under the same autocast and a float64 copy of PyG's layer without
autocast (the reference: PyG's autocast result rounds elsewhere, in places
more loosely than gnnc's); outputs and the gradients of x, of the edge
features and of every parameter are held to the documented layer
tolerances against the reference (docs/Semantics.md), PyG's too.
The output's dtype is PyG's for every layer in every combination of
autocast, layer and input dtypes (test_output_dtype_is_pygs). Then
GradScaler with float16 (scaled steps, an overflow inside gnnc's backward
found and the step skipped), NaN propagation, layers converted with
`.to(torch.bfloat16)`, float64 left alone, the dtype errors outside
autocast and torch.compile(fullgraph=True).

The inputs are rounded to the half type first, so that both libraries read
the same values and the layers' kinks (GAT's leaky_relu, SAGE's max) are
decided on the same numbers; GIN's `nn` is smooth (tanh) for the same
reason: a relu decided on the other side of 0 by a rounding moves a
gradient by a whole term (docs/Semantics.md).
"""

import copy
import os
import warnings

import pytest
import torch

try:
    import gnnc.nn as gnn
    from gnnc.nn import _common
except ImportError as e:  # the native core is not built here
    pytest.skip(f"gnnc is not importable: {e}", allow_module_level=True)
pyg_nn = pytest.importorskip("torch_geometric.nn", reason="torch_geometric is not installed")

import _parity  # noqa: E402

warnings.filterwarnings("ignore", category=FutureWarning)

DEVICE = torch.device(os.environ.get("GNNC_TEST_DEVICE", "cpu"))
if DEVICE.type == "cuda" and not torch.cuda.is_available():
    pytest.skip("GNNC_TEST_DEVICE=cuda without a usable GPU", allow_module_level=True)

HALVES = [torch.bfloat16, torch.float16]
HALF_IDS = ["bf16", "f16"]
# The per-op tolerances of docs/Semantics.md, relative to 1 + max |want|.
TOL = {torch.bfloat16: 1e-2, torch.float16: 2e-3}
# A whole layer under autocast: outputs within 4 per-op tolerances (the
# layer bound of test_half.py; worst seen 0.7), gradients within 10 (worst
# seen 4.4, PyG's 4.0: GAT's att_src, summed over the edges from rounded
# scores).
OUT_FACTOR, GRAD_FACTOR = 4, 10

IN, OUT, EDGE_DIM = 8, 4, 3


def smooth_mlp(i, o):
    return torch.nn.Sequential(torch.nn.Linear(i, 6), torch.nn.Tanh(), torch.nn.Linear(6, o))


# (id, class, args, kwargs, forward extra: None, "edge_attr" or "edge_weight")
CASES = [
    ("gcn", "GCNConv", (IN, OUT), {}, None),
    ("gcn-edge-weight-improved", "GCNConv", (IN, OUT), dict(improved=True), "edge_weight"),
    ("gcn-nonorm", "GCNConv", (IN, OUT), dict(normalize=False), None),
    ("sage-mean", "SAGEConv", (IN, OUT), {}, None),
    ("sage-max", "SAGEConv", (IN, OUT), dict(aggr="max"), None),
    ("sage-sum-norm-project", "SAGEConv", (IN, OUT),
     dict(aggr="sum", normalize=True, project=True), None),
    ("gin-train-eps", "GINConv", (), dict(nn=lambda: smooth_mlp(IN, OUT), eps=0.3,
                                          train_eps=True), None),
    ("gine-edge-dim", "GINEConv", (), dict(nn=lambda: smooth_mlp(IN, OUT),
                                           edge_dim=EDGE_DIM, train_eps=True), "edge_attr"),
    ("gat-heads-edge", "GATConv", (IN, OUT), dict(heads=2, edge_dim=EDGE_DIM), "edge_attr"),
    ("gat-mean-noloops-res", "GATConv", (IN, OUT),
     dict(heads=2, concat=False, add_self_loops=False, residual=True), None),
    ("gatv2-edge", "GATv2Conv", (IN, OUT), dict(heads=2, edge_dim=EDGE_DIM), "edge_attr"),
    ("transformer", "TransformerConv", (IN, OUT), dict(heads=2), None),
    ("transformer-edge-beta", "TransformerConv", (IN, OUT),
     dict(heads=2, edge_dim=EDGE_DIM, beta=True), "edge_attr"),
    ("agnn", "AGNNConv", (), {}, None),
    ("gcn-model", "GCN", (IN, 6, 2, OUT), {}, None),
]
RELATIONS = 3
# Where PyG's output dtype takes another path: no bias after the op, an `nn`
# without a linear map (it sees the aggregate's dtype), the relations summed
# into float32 zeros (RGCN) and the attention weights' dtype.
DTYPE_CASES = [
    ("gcn-nobias", "GCNConv", (IN, OUT), dict(bias=False), None),
    ("gin-act", "GINConv", (), dict(nn=torch.nn.Tanh), None),
    ("gine-act", "GINEConv", (), dict(nn=torch.nn.Tanh), "edge_attr_x"),
    ("gat-nobias", "GATConv", (IN, OUT), dict(heads=2, bias=False), None),
    ("gatv2-nobias", "GATv2Conv", (IN, OUT), dict(heads=2, bias=False), None),
    ("gcn-model-nobias", "GCN", (IN, 6, 2, OUT), dict(bias=False), None),
    ("rgcn", "RGCNConv", (IN, OUT, RELATIONS), {}, "edge_type"),
    ("fast-rgcn", "FastRGCNConv", (IN, OUT, RELATIONS), {}, "edge_type"),
    ("gat-weights", "GATConv", (IN, OUT), dict(heads=2, bias=False), "weights"),
    ("gatv2-weights", "GATv2Conv", (IN, OUT), dict(heads=2), "weights"),
    ("transformer-weights", "TransformerConv", (IN, OUT), dict(heads=2), "weights"),
]
BY_ID = {c[0]: c for c in CASES + DTYPE_CASES}


def graph(n=40, e=160, seed=1):
    """A random graph with self-loops and duplicate edges, and one isolated
    node (n - 1)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, n - 1, (2, e), generator=g).to(DEVICE), n


def rounded(shape, dtype, seed, scale=1.0):
    """float32 values that `dtype` holds exactly (normal, drawn in float64)."""
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(dtype) \
        .float().to(DEVICE)


def make(case):
    """(gnnc layer, PyG layer), float32, PyG's weights in both (biases and
    eps drawn: PyG makes them 0)."""
    _, cls, args, kwargs, _ = case
    ours_kw, pyg_kw = _parity.split_nn(kwargs)
    torch.manual_seed(0)
    pyg_module = pyg_nn.models if cls == "GCN" else pyg_nn
    pyg = getattr(pyg_module, cls)(*args, **pyg_kw)
    ours = getattr(gnn, cls)(*args, **ours_kw)
    ours, pyg = _parity.same_weights(ours, pyg, torch.float32,
                                     lambda name: name.endswith("bias") or name == "eps")
    return ours.to(DEVICE), pyg.to(DEVICE)


def inputs(case, dtype):
    """(x, edge_index, extra forward argument or None), x and the extra
    argument exact in `dtype`."""
    ei, n = graph()
    x = rounded((n, IN), dtype, seed=2)
    extra = None
    if case[4] == "edge_attr":
        extra = rounded((ei.size(1), EDGE_DIM), dtype, seed=5)
    elif case[4] == "edge_attr_x":  # GINE without edge_dim: x's width
        extra = rounded((ei.size(1), IN), dtype, seed=5)
    elif case[4] == "edge_type":
        extra = torch.randint(0, RELATIONS, (ei.size(1),),
                              generator=torch.Generator().manual_seed(6)).to(DEVICE)
    elif case[4] == "edge_weight":
        g = torch.Generator().manual_seed(6)
        extra = (torch.rand(ei.size(1), generator=g, dtype=torch.float64) + 0.5) \
            .to(dtype).float().to(DEVICE)
    return x, ei, extra


def run(layer, x, ei, extra, kind, dy, autocast=None):
    """layer's output and the gradients of x, the extra argument and every
    parameter for the output gradient dy; under autocast(autocast) when
    given."""
    x = x.clone().requires_grad_()
    args = [x, ei]
    if extra is not None:
        extra = extra.clone().requires_grad_(kind == "edge_attr")
        args.append(extra)
    if autocast is not None:
        with torch.autocast(DEVICE.type, dtype=autocast):
            out = layer(*args)
    else:
        out = layer(*args)
    out.backward(dy.to(out.dtype))
    grads = {"x": x.grad}
    if extra is not None and extra.requires_grad:
        grads["edge_attr"] = extra.grad
    grads.update((name, p.grad) for name, p in layer.named_parameters())
    return out, grads


def error(got, want):
    """max |got - want| / (1 + max |want|)."""
    return ((got.double() - want).abs().max() / (1 + want.abs().max())).item()


@pytest.fixture
def op_dtypes(monkeypatch):
    """The element types every gnnc op of a layer ran in (its
    configuration's: operands in other dtypes are converted inside it)."""
    seen = []
    propagate = _common.propagate
    types = {"f32": torch.float32, "f64": torch.float64, "bf16": torch.bfloat16,
             "f16": torch.float16}

    def spy(layer, template, config, edge_index, num_nodes, *tensors, **kw):
        flat = [c for part in config for c in (part if isinstance(part, tuple) else (part,))]
        seen.append({types[c] for c in flat if isinstance(c, str) and c in types})
        return propagate(layer, template, config, edge_index, num_nodes, *tensors, **kw)

    monkeypatch.setattr(_common, "propagate", spy)
    return seen


@pytest.mark.parametrize("dtype", HALVES, ids=HALF_IDS)
@pytest.mark.parametrize("case", [c[0] for c in CASES])
def test_layer_under_autocast_matches_float64_like_pyg(case, dtype, op_dtypes):
    spec = BY_ID[case]
    ours, pyg = make(spec)
    reference = copy.deepcopy(pyg).double()
    x, ei, extra = inputs(spec, dtype)
    with torch.no_grad():
        shape = reference(x.double(), ei, *([] if extra is None else [extra.double()])).shape
    g = torch.Generator().manual_seed(3)
    dy = torch.randn(shape, generator=g, dtype=torch.float64).to(dtype).double().to(DEVICE)

    out, grads = run(ours, x, ei, extra, spec[4], dy, autocast=dtype)
    # The graph part ran in the autocast dtype; GCN's
    # normalised one in float32 under float16 (conv.gcn_run_dtype: a hub's
    # degree and unscaled sum overflow float16), as PyG's aggregation runs.
    runs = torch.float32 if dtype == torch.float16 and spec[1] in ("GCNConv", "GCN") \
        and spec[3].get("normalize", True) else dtype
    assert op_dtypes and all(d == {runs} for d in op_dtypes), op_dtypes
    op_dtypes.clear()
    pyg_out, pyg_grads = run(pyg, x, ei, extra, spec[4], dy, autocast=dtype)
    want, want_grads = run(reference, x.double(), ei,
                           None if extra is None else extra.double(), spec[4], dy)

    tol = TOL[dtype]
    assert torch.isfinite(out).all()
    assert error(out, want) <= OUT_FACTOR * tol, \
        f"output: {error(out, want) / tol:.2f} tolerances (PyG's: " \
        f"{error(pyg_out, want) / tol:.2f})"
    assert error(pyg_out, want) <= OUT_FACTOR * tol  # the reference is PyG's too
    for name, w in want_grads.items():
        got = grads[name]
        if w is None:
            assert got is None or not got.any(), name
            continue
        # Inputs and parameters keep their dtype (float32): the casts'
        # backward converts the gradients.
        assert got.dtype == torch.float32, name
        assert error(got, w) <= GRAD_FACTOR * tol, \
            f"{name}: {error(got, w) / tol:.2f} tolerances (PyG's: " \
            f"{error(pyg_grads[name], w) / tol:.2f})"


# Every combination of autocast (bf16, f16, none), the layer's dtype
# (f32 or converted to a half type) and x's dtype (f32, bf16, f16).
COMBOS = [(ac, layer) for ac in HALVES for layer in [torch.float32] + HALVES] + \
    [(None, layer) for layer in HALVES]
COMBO_IDS = [f"{'off' if ac is None else HALF_IDS[HALVES.index(ac)]}-layer-"
             f"{'f32' if layer == torch.float32 else HALF_IDS[HALVES.index(layer)]}"
             for ac, layer in COMBOS]


def call(layer, x, ei, extra, kind, autocast):
    """layer's forward (PyG's arguments for `kind`), under autocast(autocast)
    when given."""
    args = [x, ei] + ([] if extra is None else [extra])
    kw = dict(return_attention_weights=True) if kind == "weights" else {}
    with torch.autocast(DEVICE.type, dtype=autocast or torch.bfloat16,
                        enabled=autocast is not None):
        return layer(*args, **kw)


def _exact_layers(case: str, dtype: torch.dtype):
    """(spec, gnnc's layer and PyG's in `dtype`, PyG's in float64, x exact
    in bfloat16 and float16 alike, edge_index, the extra input) of
    BY_ID[case]."""
    spec = BY_ID[case]
    ours, pyg = make(spec)
    ours, pyg = ours.to(dtype), pyg.to(dtype)
    reference = copy.deepcopy(pyg).double()
    x, ei, extra = inputs(spec, torch.bfloat16)
    return spec, ours, pyg, reference, x.half().float(), ei, extra


@pytest.mark.parametrize("combo", COMBOS, ids=COMBO_IDS)
@pytest.mark.parametrize("case", list(BY_ID))
def test_output_dtype_is_pygs(case, combo):
    """The output (and the attention weights) in the dtype PyG's layer
    returns for the same combination, for each x dtype PyG's layer takes,
    and within 4 tolerances (of the dtype the op runs in) of PyG's layer in
    float64 on the same weights. The inputs are exact in bfloat16 and
    float16 alike."""
    autocast, dtype = combo
    spec, ours, pyg, reference, x, ei, extra = _exact_layers(case, dtype)
    floating = extra is not None and extra.is_floating_point()
    if floating:
        extra = extra.half().float()
    ran = 0
    for x_dtype in [torch.float32] + HALVES if autocast else [dtype]:
        xt = x.to(x_dtype)
        et = extra.to(x_dtype) if floating else extra
        try:
            want = call(pyg, xt, ei, et, spec[4], autocast)
        except (RuntimeError, TypeError):
            continue  # a combination PyG's layer refuses (gnnc may run it)
        got = call(ours, xt, ei, et, spec[4], autocast)
        if spec[4] == "weights":
            (got, (_, alpha)), (want, (_, want_alpha)) = got, want
            assert alpha.dtype == want_alpha.dtype, f"x {x_dtype}: attention weights"
        assert got.dtype == want.dtype, f"x {x_dtype}"
        ref = call(reference, x.double(), ei, extra.double() if floating else extra,
                   spec[4], None)
        ref = ref[0] if spec[4] == "weights" else ref
        tol = TOL[autocast or dtype]
        assert error(got, ref) <= OUT_FACTOR * tol, \
            f"x {x_dtype}: {error(got, ref) / tol:.2f} tolerances (PyG's: " \
            f"{error(want, ref) / tol:.2f})"
        ran += 1
    assert ran


# Layers taking an edge tensor, with (layer dtype, edge tensor dtype) pairs
# of two dtypes: PyG's GCNConv promotes its messages with any edge_weight
# (the result in the promoted dtype), its GCN model only where that keeps
# the layers' dtype (the next layer's Linear refuses another), GINE an
# edge_attr it adds to the messages where `nn` takes the promoted sum;
# projected edge features (edge_dim: a Linear) take the layer's dtype only.
EDGE_DTYPE_CASES = ["gcn-edge-weight-improved", "gcn-nonorm-edge-weight", "gcn-model-edge-weight",
                    "gcn-model-1-edge-weight", "gine-act", "gine-edge-attr-mlp",
                    "gine-edge-dim", "gat-heads-edge", "transformer-edge-beta"]
BY_ID.update({
    "gcn-nonorm-edge-weight": ("gcn-nonorm-edge-weight", "GCNConv", (IN, OUT),
                               dict(normalize=False), "edge_weight"),
    "gcn-model-edge-weight": ("gcn-model-edge-weight", "GCN", (IN, 6, 2, OUT), {},
                              "edge_weight"),
    "gcn-model-1-edge-weight": ("gcn-model-1-edge-weight", "GCN", (IN, 6, 1, OUT), {},
                                "edge_weight"),
    "gine-edge-attr-mlp": ("gine-edge-attr-mlp", "GINEConv", (),
                           dict(nn=lambda: smooth_mlp(IN, OUT)), "edge_attr_x"),
})
ALL_DTYPES = [torch.float32, torch.float64] + HALVES
DTYPE_PAIRS = [(a, b) for a in ALL_DTYPES for b in ALL_DTYPES if a != b]
PAIR_IDS = [f"{str(a)[6:]}-{str(b)[6:]}" for a, b in DTYPE_PAIRS]


def close_to_reference(got, want, ref, pair):
    """gnnc's `got` within OUT_FACTOR tolerances of the float64 reference
    `ref`, the tolerance of the lower precision in the dtype `pair` (PyG's
    `want` named in the message)."""
    low = [d for d in HALVES if d in pair]
    tol = TOL[low[0]] if low else 1e-6
    assert error(got, ref) <= OUT_FACTOR * tol, \
        f"{error(got, ref) / tol:.2f} tolerances (PyG's: {error(want, ref) / tol:.2f})"


@pytest.mark.parametrize("pair", DTYPE_PAIRS, ids=PAIR_IDS)
@pytest.mark.parametrize("case", EDGE_DTYPE_CASES)
def test_edge_tensor_of_another_dtype_outside_autocast_as_pyg(case, pair):
    """Without autocast, a layer converted to one dtype (x too) and an
    edge_weight or edge_attr of another: taken exactly where PyG's layer
    takes it, the output and the gradients of x, the edge tensor and the
    parameters in PyG's dtypes, the output within 4 tolerances (of the
    lowest precision involved) of PyG's layer in float64; refused with a
    TypeError where PyG's layer raises. gnnc refused every such pair (a
    bfloat16 GCNConv with a float32 edge_weight, which PyG runs in
    float32)."""
    dtype, edge_dtype = pair
    spec = BY_ID[case]
    ours, pyg = make(spec)
    ours, pyg = ours.to(dtype), pyg.to(dtype)
    reference = copy.deepcopy(pyg).double()
    x, ei, extra = inputs(spec, torch.bfloat16)
    x, extra = x.half().float(), extra.half().float()  # exact in every dtype
    args = [x.to(dtype), ei, extra.to(edge_dtype)]
    try:
        want = pyg(*[a.clone().requires_grad_() if a.is_floating_point() else a
                     for a in args])
    except RuntimeError:
        with pytest.raises(TypeError, match=r"edge_(weight|attr)"):
            ours(*args)
        return
    leaves = [a.clone().requires_grad_() if a.is_floating_point() else a for a in args]
    got = ours(*leaves)
    assert got.dtype == want.dtype
    ref = reference(x.double(), ei, extra.double())
    close_to_reference(got, want, ref, pair)
    got.float().sum().backward()
    assert leaves[0].grad.dtype == dtype and leaves[2].grad.dtype == edge_dtype
    for name, p in ours.named_parameters():
        assert p.grad is None or p.grad.dtype == dtype, name


# Layers whose only parameter x meets is a one-element tensor PyG multiplies
# or adds (GIN's and GINE's eps, AGNN's beta), with (layer dtype, x dtype)
# pairs of two dtypes: PyG promotes them, its result of the promoted dtype
# where `nn` takes that (no parameters, or a first Linear of that dtype).
# "-pair": x given as PyG's (x_src, x_dst) pair; "-src": as (x, None), no
# (1 + eps) x term.
X_DTYPE_CASES = ["gin-act", "gin-identity", "gin-train-eps", "gin-act-pair",
                 "gin-train-eps-pair", "gin-train-eps-src", "gine-act", "gine-edge-dim",
                 "gine-act-pair", "gine-edge-dim-src", "agnn", "agnn-fixed"]
BY_ID.update({
    "gin-identity": ("gin-identity", "GINConv", (), dict(nn=torch.nn.Identity, eps=0.3),
                     None),
    "agnn-fixed": ("agnn-fixed", "AGNNConv", (), dict(requires_grad=False), None),
})


def _x_dtype_case(case, pair):
    """X_DTYPE_CASES' setup: (gnnc's layer, PyG's, PyG's in float64, the
    call taking a layer, x and the edge features as the case passes x, x
    exact in every dtype, the edge features, the arguments in the pair's
    dtypes)."""
    dtype, x_dtype = pair
    spec, ours, pyg, reference, x, ei, extra = _exact_layers(
        case.removesuffix("-pair").removesuffix("-src"), dtype)
    extra = [] if extra is None else [extra.half().float()]

    def call(layer, x, *edge):
        pair = (x, x) if case.endswith("-pair") else (x, None) if case.endswith("-src") \
            else x
        return layer(pair, ei, *edge)

    args = [x.to(x_dtype)] + [e.to(dtype) for e in extra]
    return ours, pyg, reference, call, x, extra, args


@pytest.mark.parametrize("pair", DTYPE_PAIRS, ids=PAIR_IDS)
@pytest.mark.parametrize("case", X_DTYPE_CASES)
def test_x_of_another_dtype_than_eps_or_beta_outside_autocast_as_pyg(case, pair):
    """Without autocast, a GIN, GINE or AGNN layer converted to one dtype
    and x of another (edge features of the layer's): taken exactly where
    PyG's layer takes it, the output and the gradients of x and the
    parameters in PyG's dtypes, the output within 4 tolerances (of the
    lowest precision involved) of PyG's layer in float64; refused with a
    TypeError naming nn's first Linear where PyG's layer raises. gnnc
    refused every such pair ("x is ... but the layer's parameters are
    ...")."""
    dtype, x_dtype = pair
    ours, pyg, reference, call, x, extra, args = _x_dtype_case(case, pair)
    try:
        want = call(pyg, *[a.clone().requires_grad_() for a in args])
    except RuntimeError:
        with pytest.raises(TypeError, match=r"nn's first Linear is torch\."):
            call(ours, *args)
        return
    leaves = [a.clone().requires_grad_() for a in args]
    got = call(ours, *leaves)
    assert got.dtype == want.dtype
    ref = call(reference, x.double(), *[e.double() for e in extra])
    close_to_reference(got, want, ref, pair)
    got.float().sum().backward()
    assert leaves[0].grad.dtype == x_dtype
    for name, p in ours.named_parameters():
        assert p.grad is None or p.grad.dtype == dtype, name


# (layer dtype, x dtype) pairs with a float64, which autocast casts not.
F64_PAIRS = [p for p in DTYPE_PAIRS if torch.float64 in p]
F64_PAIR_IDS = [i for p, i in zip(DTYPE_PAIRS, PAIR_IDS) if torch.float64 in p]


@pytest.mark.parametrize("autocast", HALVES, ids=HALF_IDS)
@pytest.mark.parametrize("pair", F64_PAIRS, ids=F64_PAIR_IDS)
@pytest.mark.parametrize("case", X_DTYPE_CASES)
def test_float64_layer_or_x_under_autocast_as_pyg(case, pair, autocast):
    """Under autocast a GIN, GINE or AGNN layer and x of two dtypes, one
    float64 (a layer .double()'d, its eps or beta float64; or x, x_src and
    x_dst float64): autocast casts no float64, so PyG's layer promotes as
    it does outside autocast; gnnc takes the pair exactly where PyG's layer
    does, the output of PyG's dtype and within tolerance of PyG's layer in
    float64, and refuses with a TypeError naming nn's first Linear where
    PyG's raises. gnnc refused every such pair ("x is torch.float32 but the
    layer's parameters are torch.float64; ..., or run the layer under
    torch.autocast", with autocast on)."""
    dtype, x_dtype = pair
    ours, pyg, reference, call, x, extra, args = _x_dtype_case(case, pair)
    with torch.autocast(DEVICE.type, dtype=autocast):
        try:
            want = call(pyg, *args)
        except RuntimeError:
            with pytest.raises(TypeError, match=r"nn's first Linear is torch\."):
                call(ours, *args)
            return
        got = call(ours, *args)
    assert got.dtype == want.dtype
    ref = call(reference, x.double(), *[e.double() for e in extra])
    close_to_reference(got, want, ref, pair + (autocast,))


# GIN's and GINE's bipartite form with x_src and x_dst of two dtypes: PyG
# sums the sources' messages in theirs and adds (1 + eps) x_dst, PyTorch
# promoting the two (and eps); `nn` then takes the promoted sum or raises.
PAIR_DTYPE_CASES = ["gin-act", "gin-train-eps", "gine-act", "gine-edge-dim"]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("pair", DTYPE_PAIRS, ids=PAIR_IDS)
@pytest.mark.parametrize("case", PAIR_DTYPE_CASES)
def test_source_and_target_features_of_two_dtypes_outside_autocast_as_pyg(case, pair,
                                                                          dtype):
    """Without autocast, a GIN or GINE layer of `dtype` (edge features of
    it) given (x_src, x_dst) of two dtypes: taken exactly where PyG's layer
    takes it, the output and the gradients of x_src and x_dst in PyG's
    dtypes, the output within 4 tolerances (of the lowest precision
    involved) of PyG's layer in float64; refused with a TypeError naming
    nn's first Linear where PyG's layer raises. gnnc refused every such pair
    ("the source features are ... but the target features ...")."""
    src_dtype, dst_dtype = pair
    spec, ours, pyg, reference, x_src, ei, extra = _exact_layers(case, dtype)
    x_dst = rounded((x_src.size(0), IN), torch.bfloat16, seed=7).half().float()
    extra = [] if extra is None else [extra.half().float()]
    args = [x_src.to(src_dtype), x_dst.to(dst_dtype)]

    def call(layer, xs, xd, *edge):
        return layer((xs, xd), ei, *edge)

    try:
        want = call(pyg, *[a.clone().requires_grad_() for a in args],
                    *[e.to(dtype) for e in extra])
    except RuntimeError:
        with pytest.raises(TypeError, match=r"nn's first Linear is torch\."):
            call(ours, *args, *[e.to(dtype) for e in extra])
        return
    leaves = [a.clone().requires_grad_() for a in args]
    got = call(ours, *leaves, *[e.to(dtype) for e in extra])
    assert got.dtype == want.dtype
    ref = call(reference, x_src.double(), x_dst.double(), *[e.double() for e in extra])
    close_to_reference(got, want, ref, pair)
    got.float().sum().backward()
    assert leaves[0].grad.dtype == src_dtype and leaves[1].grad.dtype == dst_dtype
    for name, p in ours.named_parameters():
        assert p.grad is None or p.grad.dtype == dtype, name


# --------------------------------------------------------------------------
# GradScaler (float16), infinities and NaN.


class TwoLayers(torch.nn.Module):
    """GAT (2 heads, ELU) then GCN, from `lib` (gnnc.nn or PyG's)."""

    def __init__(self, lib, classes):
        super().__init__()
        self.conv1 = lib.GATConv(IN, 8, heads=2)
        self.conv2 = lib.GCNConv(16, classes)

    def forward(self, x, edge_index):
        return self.conv2(torch.nn.functional.elu(self.conv1(x, edge_index)), edge_index)


def train_scaled(model, x, ei, y, steps):
    """Adam steps under autocast(float16) with a GradScaler: the losses and
    the scale after each step."""
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    scaler = torch.amp.GradScaler(DEVICE.type)
    losses, scales = [], []
    for _ in range(steps):
        opt.zero_grad()
        with torch.autocast(DEVICE.type, dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x, ei), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
        scales.append(scaler.get_scale())
    return losses, scales


def test_gradscaler_float16_trains_like_pyg():
    ei, n = graph()
    x = rounded((n, IN), torch.float16, seed=2)
    y = torch.randint(0, 3, (n,), generator=torch.Generator().manual_seed(7)).to(DEVICE)
    torch.manual_seed(0)
    pyg = TwoLayers(pyg_nn, 3)
    ours = TwoLayers(gnn, 3)
    ours.load_state_dict(pyg.state_dict())
    ours, pyg = ours.to(DEVICE), pyg.to(DEVICE)
    losses, scales = train_scaled(ours, x, ei, y, 12)
    want, want_scales = train_scaled(pyg, x, ei, y, 12)
    assert scales == want_scales  # the same steps taken (none skipped here)
    assert losses[-1] < 0.8 * losses[0]
    # 12 steps apart from each other only by roundings.
    for a, b in zip(losses, want):
        assert abs(a - b) <= 2e-2 * (1 + abs(b)), (losses, want)
    for name, p in ours.named_parameters():
        assert torch.isfinite(p).all(), name


def star(k):
    """Node 0 -> nodes 1..k (k out-edges of node 0)."""
    ei = torch.stack([torch.zeros(k, dtype=torch.long), torch.arange(1, k + 1)])
    return ei.to(DEVICE), k + 1


@pytest.mark.parametrize("cls", ["GCNConv", "GATConv", "SAGEConv"])
def test_overflow_in_the_backward_reaches_the_scaler(cls):
    """The gradient of node 0's projected features sums 8 float16 gradients
    of 1e4 (each finite) to 8e4, above float16's 65504: gnnc rounds it to
    inf, the inf reaches the projection's weights and GradScaler skips the
    step and backs off. (SAGE projects first: 4 output channels, 8 in.)"""
    ei, n = star(8)
    kwargs = dict(normalize=False, bias=False) if cls == "GCNConv" else \
        dict(aggr="sum", root_weight=False, bias=False) if cls == "SAGEConv" else \
        dict(add_self_loops=False, bias=False)
    torch.manual_seed(0)
    layer = getattr(gnn, cls)(IN, OUT, **kwargs).to(DEVICE)
    x = torch.full((n, IN), 0.125, device=DEVICE)
    before = [p.detach().clone() for p in layer.parameters()]
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler(DEVICE.type, init_scale=1e4)
    with torch.autocast(DEVICE.type, dtype=torch.float16):
        out = layer(x, ei)
    # (GAT's output is float32, as PyG's: float32 att_src, no bias.)
    assert out.dtype == (torch.float32 if cls == "GATConv" else torch.float16)
    assert torch.isfinite(out).all()
    scaler.scale(out.float().sum()).backward()
    lin = layer.lin_l if cls == "SAGEConv" else layer.lin
    assert not torch.isfinite(lin.weight.grad).all()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 5e3
    for p, q in zip(layer.parameters(), before):
        assert torch.equal(p, q)  # the step was skipped
    # A scale that fits: the step is taken.
    opt.zero_grad()
    with torch.autocast(DEVICE.type, dtype=torch.float16):
        out = layer(x, ei)
    scaler.update(1.0)
    scaler.scale(out.float().sum()).backward()
    scaler.step(opt)
    assert all(torch.isfinite(p).all() for p in layer.parameters())
    assert any(not torch.equal(p, q) for p, q in zip(layer.parameters(), before))


@pytest.mark.parametrize("dtype", HALVES, ids=HALF_IDS)
@pytest.mark.parametrize("case", ["gcn", "sage-max", "gat-heads-edge", "transformer",
                                  "agnn", "gcn-model"])
def test_nan_spreads_like_pyg(case, dtype):
    """A NaN feature under autocast gives NaN where PyG's gives NaN, in the
    output and in the weights' gradients."""
    spec = BY_ID[case]
    ours, pyg = make(spec)
    x, ei, extra = inputs(spec, dtype)
    x[3, 1] = float("nan")
    with torch.no_grad():
        dy = torch.ones_like(pyg(x, ei, *([] if extra is None else [extra])))
    got, grads = run(ours, x, ei, extra, spec[4], dy, autocast=dtype)
    want, want_grads = run(pyg, x, ei, extra, spec[4], dy, autocast=dtype)
    assert torch.isnan(got).any()
    assert torch.equal(torch.isnan(got), torch.isnan(want))
    for name, w in want_grads.items():
        if w is not None and not torch.isfinite(w).all():
            assert not torch.isfinite(grads[name]).all(), name


# --------------------------------------------------------------------------
# Outside autocast; float64; errors.


@pytest.mark.parametrize("case", ["gcn", "gat-heads-edge", "gine-edge-dim", "gcn-model"])
def test_a_layer_converted_to_bfloat16_runs_in_it(case, op_dtypes):
    """layer.to(torch.bfloat16) on bfloat16 inputs, without autocast: the op,
    the output and every gradient are bfloat16, close to float64 on the same
    (rounded) weights."""
    spec = BY_ID[case]
    ours, _ = make(spec)
    ours = ours.to(torch.bfloat16)
    reference = copy.deepcopy(ours).double()
    x, ei, extra = inputs(spec, torch.bfloat16)
    bf = torch.bfloat16
    x, extra = x.to(bf), None if extra is None else extra.to(bf)
    out = ours(x, ei, *([] if extra is None else [extra]))
    assert op_dtypes and all(d == {bf} for d in op_dtypes), op_dtypes
    assert out.dtype == bf
    want = reference(x.double(), ei, *([] if extra is None else [extra.double()]))
    assert error(out, want) <= OUT_FACTOR * TOL[bf]
    out.float().sum().backward()
    want.sum().backward()
    theirs = dict(reference.named_parameters())
    for name, p in ours.named_parameters():
        assert p.grad.dtype == bf, name
        assert error(p.grad, theirs[name].grad) <= GRAD_FACTOR * TOL[bf], name


@pytest.mark.parametrize("case", ["gcn", "gat-heads-edge", "gcn-model"])
def test_float64_is_left_alone_under_autocast(case):
    """As autocast leaves float64 ops: the same bits with and without it."""
    spec = BY_ID[case]
    ours, _ = make(spec)
    ours = ours.double()
    x, ei, extra = inputs(spec, torch.float32)
    args = [x.double(), ei] + ([] if extra is None else [extra.double()])
    with torch.autocast(DEVICE.type, dtype=torch.bfloat16):
        out = ours(*args)
    assert out.dtype == torch.float64
    assert torch.equal(out, ours(*args))


def test_dtype_errors():
    ei, n = graph()
    x = rounded((n, IN), torch.bfloat16, seed=2)
    layer = gnn.GCNConv(IN, OUT).to(DEVICE)
    w = torch.rand(ei.size(1), device=DEVICE)
    # Outside autocast the input and the parameters must agree, as in PyTorch.
    with pytest.raises(TypeError, match=r"x is torch.bfloat16 but the layer's parameters "
                                        r"are torch.float32.*torch.autocast"):
        layer(x.bfloat16(), ei)
    # An edge_weight of another dtype promotes the messages, as in PyG
    # (test_edge_tensor_of_another_dtype_outside_autocast_as_pyg); one that
    # is not floating is refused.
    assert layer(x, ei, w.bfloat16()).dtype == torch.float32
    with pytest.raises(TypeError, match="edge_weight must have a floating dtype"):
        layer(x, ei, w.long())
    gat = gnn.GATConv(IN, OUT, edge_dim=EDGE_DIM).to(DEVICE)
    ea = torch.rand(ei.size(1), EDGE_DIM, device=DEVICE)
    with pytest.raises(TypeError, match="edge_attr must have x's dtype"):
        gat(x, ei, ea.half())
    # Autocast casts no float64: it is no way out for a float64 x.
    with pytest.raises(TypeError, match=r"x is torch.float64 but the layer's parameters "
                                        r"are torch.float32; convert one of them "
                                        r"\(e.g. layer.to\(torch.float64\)\)$"):
        layer(x.double(), ei)
    # Under autocast the dtypes it casts mix; float64 mixes with none in a
    # Linear (PyG's raises), and an edge_weight of float64 promotes PyG's
    # messages (autocast leaves it as it is): PyG's result is float64.
    with torch.autocast(DEVICE.type, dtype=torch.bfloat16):
        assert layer(x.half(), ei, w.bfloat16()).dtype == torch.float32
        assert gat(x.half(), ei, ea.bfloat16()).dtype == torch.float32
        # (The message named torch.autocast as the way out, with it on.)
        with pytest.raises(TypeError, match=r"x is torch.float32 but the layer's parameters "
                                            r"are torch.float64; convert one of them "
                                            r"\(e.g. layer.to\(torch.float32\)\) "
                                            r"\(torch.autocast, on here, does not cast "
                                            r"float64\)$"):
            copy.deepcopy(layer).double()(x, ei)
        assert layer(x, ei, w.double()).dtype == torch.float64
        with pytest.raises(TypeError, match="edge_weight must have x's dtype"):
            layer(x, ei, w.long())


# --------------------------------------------------------------------------
# torch.compile.


@pytest.mark.parametrize("case", ["gat-heads-edge", "gcn-model"])
def test_torch_compile_fullgraph_under_autocast(case):
    """No graph break with autocast inside or around the compiled code; the
    compiled code computes what eager autocast does, gradients included, and
    runs in float32 again once autocast is off (dynamo guards on it)."""
    spec = BY_ID[case]
    ours, _ = make(spec)
    x, ei, extra = inputs(spec, torch.bfloat16)
    args = [ei] + ([] if extra is None else [extra])

    def step(x):
        with torch.autocast(DEVICE.type, dtype=torch.bfloat16):
            return ours(x, *args)

    torch._dynamo.reset()
    explanation = torch._dynamo.explain(step)(x)
    assert explanation.graph_break_count == 0, explanation.break_reasons
    xe, xc = x.clone().requires_grad_(), x.clone().requires_grad_()
    eager = step(xe)
    compiled = torch.compile(ours, fullgraph=True)
    with torch.autocast(DEVICE.type, dtype=torch.bfloat16):
        out = compiled(xc, *args)
    # gnnc's ops are the same in both; on CUDA inductor fuses the PyTorch
    # parts around them (linear, bias) into its own kernels, which round
    # differently (1.2e-7 measured on an H200): the dtype's default
    # tolerance there, bit for bit on the CPU.
    exact = {"rtol": 0, "atol": 0} if DEVICE.type == "cpu" else {}
    torch.testing.assert_close(out, eager, **exact)
    eager.sum().backward()
    out.sum().backward()
    torch.testing.assert_close(xc.grad, xe.grad, **exact)
    torch.testing.assert_close(compiled(x, *args), ours(x, *args), **exact)


@pytest.mark.parametrize("model", [False, True])
@pytest.mark.parametrize("how", ["autocast", "half"])
def test_gcn_in_float16_holds_a_hubs_degree_and_sum(model, how):
    """A hub with 70,000 in-edges (its degree past float16's 65,504) whose
    neighbours' features are 10 (their unscaled sum past it too): GCN's
    function in float16 stored the degree and that sum in float16 and gave
    0 or inf where the result (about 26.5 and 1,000) is finite in float32;
    it runs in float32 for float16 operands now, the result rounded once."""
    leaves = torch.arange(1, 70_001, device=DEVICE)
    edge_index = torch.stack([leaves, torch.zeros_like(leaves)])
    x = torch.full((70_001, 1), 10.0, device=DEVICE)
    layer = (gnn.GCN(1, 1, num_layers=1) if model else gnn.GCNConv(1, 1)).to(DEVICE)
    conv = layer.convs[0] if model else layer
    with torch.no_grad():
        conv.lin.weight.fill_(1.0)
        conv.bias.zero_()
        truth = layer.double()(x.double(), edge_index)[0].item()
    layer.float()
    with torch.no_grad():
        if how == "autocast":
            with torch.autocast(DEVICE.type, dtype=torch.float16):
                out = layer(x, edge_index)
        else:
            out = layer.half()(x.half(), edge_index)
    assert torch.isfinite(out).all()
    assert abs(out[0].item() - truth) < 1e-2 * truth, (out[0].item(), truth)


# --------------------------------------------------------------------------
# No casts around the op: under autocast the op's function converts the
# float32 operands it is given (x, the parameters) on the device and returns
# its results in PyG's dtypes (_common.operand, _common.returned), so a
# layer made of one gnnc op dispatches no `aten::to` (an allocation, a kernel
# and an autograd node each, about 0.6 ms of host time per SAGE step on an
# H200 in session 56), and its parameters' gradients come back float32.

def relu_mlp(i, o):
    return torch.nn.Sequential(torch.nn.Linear(i, 6), torch.nn.ReLU(), torch.nn.Linear(6, o))


BY_ID.update({
    "gat": ("gat", "GATConv", (IN, OUT), dict(heads=2), None),
    "gatv2": ("gatv2", "GATv2Conv", (IN, OUT), dict(heads=2), None),
    "gin-relu-mlp": ("gin-relu-mlp", "GINConv", (), dict(nn=lambda: relu_mlp(IN, OUT)), None),
    "gine-relu-mlp-edge": ("gine-relu-mlp-edge", "GINEConv", (),
                           dict(nn=lambda: relu_mlp(IN, OUT), edge_dim=EDGE_DIM), "edge_attr"),
})
# The layers whose whole forward is the op (no Linear left to PyTorch,
# which autocast casts as it casts PyG's).
WHOLE = ["gcn", "gcn-nonorm", "gcn-nobias", "gcn-model", "gcn-edge-weight-improved",
         "sage-mean", "sage-max", "gat",
         "gat-nobias", "gatv2", "transformer", "agnn", "gin-relu-mlp", "gin-act",
         "gine-relu-mlp-edge"]


def _to_copies(fn):
    """(what fn() returns, how many aten._to_copy it dispatched)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Count(TorchDispatchMode):
        n = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func is torch.ops.aten._to_copy.default:
                self.n += 1
            return func(*args, **(kwargs or {}))

    with Count() as c:
        out = fn()
    return out, c.n


@pytest.mark.parametrize("dtype", HALVES, ids=HALF_IDS)
@pytest.mark.parametrize("case", WHOLE)
def test_no_cast_around_the_op_under_autocast(case, dtype):
    """A second call (its graph derived and cached by the first) of a layer
    made of one op, on float32 x and parameters under autocast: no
    `aten._to_copy` forward or backward; its output has PyG's dtype, equals
    the first call's, and the gradients of x and of every parameter are
    float32 and equal the first call's."""
    spec = BY_ID[case]
    ours, pyg = make(spec)
    x, ei, extra = inputs(spec, dtype)
    more = [] if extra is None else [extra]
    with torch.no_grad(), torch.autocast(DEVICE.type, dtype=dtype):
        want_dtype = pyg(x, ei, *more).dtype
    results = []
    for _ in range(2):
        xx = x.clone().requires_grad_()
        with torch.autocast(DEVICE.type, dtype=dtype):
            out, forward = _to_copies(lambda: ours(xx, ei, *more))
        dy = torch.ones_like(out)
        _, backward = _to_copies(lambda: out.backward(dy))
        grads = [xx.grad] + [p.grad.clone() for p in ours.parameters()]
        ours.zero_grad()
        results.append((out.detach(), grads, forward, backward))
    (out1, grads1, _, _), (out2, grads2, forward, backward) = results
    assert (forward, backward) == (0, 0)
    assert out2.dtype == want_dtype
    torch.testing.assert_close(out2, out1, rtol=0, atol=0)
    for g1, g2 in zip(grads1, grads2):
        assert g2.dtype == torch.float32
        torch.testing.assert_close(g2, g1, rtol=0, atol=0)


# Every layer with a call plan (nn/_plan.py: GCN, SAGE, GIN, GAT, GATv2,
# Transformer, AGNN) keeps it under autocast too:
# made for the autocast dtype in force, taken only while it is.
PLANNED = {"gcn": {torch.bfloat16: True, torch.float16: False},  # (float16 GCN: float32)
           "sage-max": {torch.bfloat16: True, torch.float16: True},
           "sage-mean": {torch.bfloat16: True, torch.float16: True},
           "gin-relu-mlp": {torch.bfloat16: True, torch.float16: True},
           "gat": {torch.bfloat16: True, torch.float16: True},
           "gatv2": {torch.bfloat16: True, torch.float16: True},
           "transformer": {torch.bfloat16: True, torch.float16: True},
           "agnn": {torch.bfloat16: True, torch.float16: True},
           "gine-relu-mlp-edge": {torch.bfloat16: True, torch.float16: True}}


@pytest.mark.parametrize("case", list(PLANNED))
def test_plans_under_autocast_follow_its_state(case, monkeypatch):
    """Each step calls the layer (x float32 unless said) and a fresh copy
    of it (which takes the full path: a copy keeps no plan), forward and
    backward: the layer took its plan where it should (a second call in the
    same autocast state), and its output and every gradient equal the
    copy's, in the copy's dtypes. Autocast turned off, to another dtype or
    on again, and x of another dtype, each take the full path once."""
    full = []
    real = _common.check_inputs
    monkeypatch.setattr(_common, "check_inputs",
                        lambda *a, **k: full.append(1) or real(*a, **k))
    spec = BY_ID[case]
    ours, _ = make(spec)
    x, ei, extra = inputs(spec, torch.bfloat16)
    more = [] if extra is None else [extra]
    exact = dict(rtol=0, atol=0) if DEVICE.type == "cpu" else None

    def step(what, autocast, planned, xin=x):
        full.clear()
        fresh = copy.deepcopy(ours)
        got = []
        for layer in (ours, fresh):
            xx = xin.clone().requires_grad_()
            with torch.autocast(DEVICE.type, dtype=autocast or torch.bfloat16,
                                enabled=autocast is not None):
                out = layer(xx, ei, *more)
            out.backward(torch.ones_like(out))
            got.append([out.detach(), xx.grad] + [p.grad for p in layer.parameters()])
            layer.zero_grad(set_to_none=True)
        assert (len(full) == 1) == planned, (what, len(full))
        tol = exact or dict(rtol=TOL.get(autocast, 1e-5), atol=TOL.get(autocast, 1e-5))
        for a, b in zip(*got):
            assert a.dtype == b.dtype, what
            torch.testing.assert_close(a, b, **tol, msg=what)

    bf, f16 = torch.bfloat16, torch.float16
    step("bfloat16", bf, planned=False)
    step("bfloat16 again", bf, planned=PLANNED[case][bf])
    step("autocast off", None, planned=False)
    step("off again", None, planned=True)
    step("bfloat16 once more", bf, planned=False)
    step("and planned", bf, planned=PLANNED[case][bf])
    step("float16", f16, planned=False)
    step("float16 again", f16, planned=PLANNED[case][f16])
    step("x in bfloat16", bf, planned=False, xin=x.to(bf))
    step("and planned", bf, planned=PLANNED[case][bf], xin=x.to(bf))


@pytest.mark.parametrize("nodes,edges", [(0, 0), (5, 0)], ids=["no-nodes", "no-edges"])
@pytest.mark.parametrize("case", WHOLE)
def test_empty_graphs_under_autocast(case, nodes, edges):
    """A graph with no nodes, or nodes without edges, under autocast: the
    conversions inside the op run on empty tensors too; PyG's output shape
    and dtype, float32 gradients (zeros where nothing was aggregated)."""
    spec = BY_ID[case]
    ours, pyg = make(spec)
    x = torch.randn(nodes, IN, device=DEVICE, requires_grad=True)
    ei = torch.zeros(2, edges, dtype=torch.long, device=DEVICE)
    more = ([torch.randn(edges, EDGE_DIM, device=DEVICE)] if spec[4] == "edge_attr" else
            [torch.rand(edges, device=DEVICE)] if spec[4] == "edge_weight" else [])
    with torch.autocast(DEVICE.type, dtype=torch.bfloat16):
        want = pyg(x.detach(), ei, *more)
        for _ in range(2):  # (the second call on the plan where there is one)
            out = ours(x, ei, *more)
    assert out.shape == want.shape and out.dtype == want.dtype
    out.float().sum().backward()
    assert x.grad.dtype == torch.float32 and x.grad.shape == x.shape
    for name, p in ours.named_parameters():
        assert p.grad is None or (p.grad.dtype == torch.float32 and
                                  torch.isfinite(p.grad).all()), name


@pytest.mark.parametrize("case", ["gcn", "sage-max", "gin-relu-mlp", "gatv2", "transformer"])
def test_explain_shows_the_variant_that_ran(case):
    """gnnc.explain(layer) explains the function the layer's last call ran:
    under autocast the variant that converts its float32 operands inside
    (more kernels than the same function without them, which is what it
    explained before), also when that call took the layer's plan; after a
    float32 call, that one's."""
    import gnnc
    spec = BY_ID[case]
    ours, _ = make(spec)
    x, ei, extra = inputs(spec, torch.bfloat16)
    more = [] if extra is None else [extra]

    def kernels(obj):
        return [len(f["groups"]) for f in gnnc.explain(obj).functions]

    def unconverted():
        """The function of the layer's last call without its operands
        stored in another type (nor gradients left out)."""
        ran = ours.__dict__["_gnnc_ran"]
        return _common._function(ran[0], ran[1], (), (), ran[4] if len(ran) == 5 else ())

    ours(x, ei, *more)
    plain = kernels(ours)
    for _ in range(2):  # (the second call takes the plan)
        with torch.autocast(DEVICE.type, dtype=torch.bfloat16):
            ours(x, ei, *more)
        mixed, base = kernels(ours), kernels(unconverted())
        assert mixed[0] > base[0], (base, mixed)
    ours(x, ei, *more)
    assert kernels(ours) == plain
