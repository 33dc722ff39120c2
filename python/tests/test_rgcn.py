"""gnnc.nn.RGCNConv (issue 31 item 4) against PyG's RGCNConv with the same
weights: plain, basis and block decompositions, mean and sum, featureless
(node index) input, a (x_src, x_dst) pair, flow; float64 gradcheck; empty
graphs, isolated nodes, duplicate edges and self-loops; the checks of bad
input; the per-graph cache; torch.compile without graph breaks. CPU by
default, CUDA with GNNC_TEST_DEVICE=cuda."""

import os
import warnings

import pytest
import torch

gnn = pytest.importorskip("gnnc.nn")
pyg_nn = pytest.importorskip("torch_geometric.nn")

import _parity  # noqa: E402

warnings.filterwarnings("ignore", category=FutureWarning)

DEVICE = torch.device(os.environ.get("GNNC_TEST_DEVICE", "cpu"))
if DEVICE.type == "cuda" and not torch.cuda.is_available():
    pytest.skip("GNNC_TEST_DEVICE=cuda without a usable GPU", allow_module_level=True)

IN, OUT, R = 8, 6, 5


def graph(n, e, relations=R, seed=1, nd=None):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(0, max(n, 1), (e,), generator=g)
    dst = torch.randint(0, max(n if nd is None else nd, 1), (e,), generator=g)
    et = torch.randint(0, relations, (e,), generator=g)
    if e >= 4:
        src[:2], dst[:2] = 0, 0            # a self-loop, twice (a duplicate)
        src[2], dst[2], et[2] = 1, 2, 0    # another duplicate, same relation
        src[3], dst[3], et[3] = 1, 2, 0
    return torch.stack([src, dst]).to(DEVICE), et.to(DEVICE)


def layers(dtype, in_channels=IN, **kw):
    ours = gnn.RGCNConv(in_channels, OUT, R, **kw)
    pyg = pyg_nn.RGCNConv(in_channels, OUT, R, **kw)
    ours, pyg = _parity.same_weights(ours, pyg, dtype)
    return ours.to(DEVICE), pyg.to(DEVICE)


def check(ours, pyg, x_ours, x_pyg, edge_index, edge_type, dtype):
    out, want = ours(x_ours, edge_index, edge_type), pyg(x_pyg, edge_index, edge_type)
    torch.testing.assert_close(out, want, **_parity.tol(dtype))
    xs = x_ours if isinstance(x_ours, tuple) else (x_ours,)
    xp = x_pyg if isinstance(x_pyg, tuple) else (x_pyg,)
    leaves = [t for t in xs if t is not None and t.requires_grad] + list(ours.parameters())
    theirs = [t for t in xp if t is not None and t.requires_grad] + list(pyg.parameters())
    _parity.same_gradients(out, want, leaves, theirs, dtype)
    return out


def features(n, dtype, channels=IN, seed=2):
    x = _parity.features(n, dtype, channels, seed=seed).to(DEVICE)
    return x.requires_grad_(), x.detach().clone().requires_grad_()


DECOMPOSITIONS = [{}, {"num_bases": 3}, {"num_blocks": 2}]
IDS = ["full", "bases", "blocks"]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("kw", DECOMPOSITIONS, ids=IDS)
@pytest.mark.parametrize("aggr", ["mean", "add", "sum"])
@pytest.mark.parametrize("n,e", [(30, 200), (9, 0), (0, 0), (40, 7)],
                         ids=["graph", "no-edges", "empty", "isolated"])
def test_equals_pyg(dtype, kw, aggr, n, e):
    ours, pyg = layers(dtype, aggr=aggr, **kw)
    x, xp = features(n, dtype)
    ei, et = graph(n, e)
    check(ours, pyg, x, xp, ei, et, dtype)


@pytest.mark.parametrize("kw", DECOMPOSITIONS, ids=IDS)
@pytest.mark.parametrize("aggr", ["mean", "sum"])
@pytest.mark.parametrize("span_bytes", [1, 3 * 20 * OUT * 4], ids=["one", "three"])
def test_relation_spans_equal_pyg(monkeypatch, kw, aggr, span_bytes):
    """Past _SPAN_BYTES the relations go in spans (edges sorted by relation):
    spans of one relation, and of three (the last one shorter)."""
    from gnnc.nn import rgcn
    monkeypatch.setattr(rgcn, "_SPAN_BYTES", span_bytes)
    ours, pyg = layers(torch.float32, aggr=aggr, **kw)
    x, xp = features(20, torch.float32)
    ei, et = graph(20, 150)
    check(ours, pyg, x, xp, ei, et, torch.float32)


@pytest.mark.parametrize("root_weight,bias", [(False, False), (True, False), (False, True)])
def test_without_root_or_bias(root_weight, bias):
    ours, pyg = layers(torch.float32, root_weight=root_weight, bias=bias)
    x, xp = features(20, torch.float32)
    ei, et = graph(20, 90)
    check(ours, pyg, x, xp, ei, et, torch.float32)


@pytest.mark.parametrize("kw", DECOMPOSITIONS[:2], ids=IDS[:2])
@pytest.mark.parametrize("index", ["none", "permuted"])
def test_featureless_input_equals_pyg(kw, index):
    n = 25
    ours, pyg = layers(torch.float32, in_channels=n, **kw)
    ei, et = graph(n, 120)
    x = None if index == "none" else torch.randperm(
        n, generator=torch.Generator().manual_seed(3)).to(DEVICE)
    check(ours, pyg, x, x, ei, et, torch.float32)


def test_featureless_blocks_refused_as_pyg():
    ours = gnn.RGCNConv(10, 4, R, num_blocks=2).to(DEVICE)
    ei, et = graph(10, 30)
    with pytest.raises(ValueError, match="Block-diagonal"):
        ours(None, ei, et)


@pytest.mark.parametrize("ns,nd", [(7, 4), (4, 9)])
def test_pair_equals_pyg(ns, nd):
    ours, pyg = layers(torch.float32, in_channels=(IN, 3))
    xs, xsp = features(ns, torch.float32)
    xd, xdp = features(nd, torch.float32, channels=3, seed=5)
    ei, et = graph(ns, 30, nd=nd)
    out = check(ours, pyg, (xs, xd), (xsp, xdp), ei, et, torch.float32)
    assert out.shape == (nd, OUT)


@pytest.mark.parametrize("kw", DECOMPOSITIONS, ids=IDS)
@pytest.mark.parametrize("aggr", ["mean", "sum"])
@pytest.mark.parametrize("ns,nd", [(30, 30), (7, 4), (0, 0)], ids=["square", "pair", "empty"])
def test_sparse_tensor_equals_pyg(kw, aggr, ns, nd):
    """PyG's other form: a torch_sparse.SparseTensor adj_t [num_dst, num_src]
    whose values are the relation ids (a stand-in: torch_sparse is not
    installed here, so PyG, which tests for the real class, runs the
    equivalent edge_index and edge_type, the entries as edges j -> i).
    Duplicate entries stay separate edges."""
    dtype = torch.float64
    ours, pyg = layers(dtype, in_channels=IN if ns == nd else (IN, 3), aggr=aggr, **kw)
    ei, et = graph(ns, 60 if ns else 0, nd=nd)
    adj = _parity.SparseTensor(ei[1], ei[0], et, (nd, ns))
    x, xp = features(ns, dtype)
    if ns != nd:
        xd, xdp = features(nd, dtype, channels=3, seed=5)
        x, xp = (x, xd), (xp, xdp)
    out = ours(x, adj)
    want = pyg(xp, ei, et)
    torch.testing.assert_close(out, want, **_parity.tol(dtype))
    xs = x if isinstance(x, tuple) else (x,)
    xps = xp if isinstance(xp, tuple) else (xp,)
    _parity.same_gradients(out, want, list(xs) + list(ours.parameters()),
                           list(xps) + list(pyg.parameters()), dtype)
    # The same adjacency object: the cached graph, no rebuild.
    from gnnc.nn import _common
    e1, *_ = _common.sparse_edges("t", adj, "source_to_target", adj.device(), "entries")
    e2, *_ = _common.sparse_edges("t", adj, "source_to_target", adj.device(), "entries")
    assert e1 is e2


def test_flow_target_to_source_equals_pyg():
    ours, pyg = layers(torch.float32, flow="target_to_source")
    x, xp = features(15, torch.float32)
    ei, et = graph(15, 60)
    check(ours, pyg, x, xp, ei, et, torch.float32)


@pytest.mark.parametrize("kw", DECOMPOSITIONS, ids=IDS)
def test_gradcheck_float64(kw):
    torch.manual_seed(0)
    layer = gnn.RGCNConv(4, 4, 3, **kw).double().to(DEVICE)
    x = torch.randn(6, 4, dtype=torch.float64, device=DEVICE, requires_grad=True)
    ei, et = graph(6, 20, relations=3)
    params = list(layer.parameters())

    def f(x, *ps):
        with torch.no_grad():
            for p, v in zip(params, ps):
                p.copy_(v)
        # The parameters enter through the module; gradcheck perturbs copies.
        return torch.func.functional_call(layer, dict(zip(
            [n for n, _ in layer.named_parameters()], ps)), (x, ei, et))

    assert torch.autograd.gradcheck(
        f, (x, *[p.detach().clone().requires_grad_() for p in params]))


def test_train_steps_equal_pyg():
    """A few optimiser steps of a 2-layer RGCN: the same losses as PyG's."""
    n = 40
    ei, et = graph(n, 300)
    y = torch.randint(0, 3, (n,), generator=torch.Generator().manual_seed(7)).to(DEVICE)

    def model(nn):
        torch.manual_seed(11)
        return torch.nn.ModuleList([nn.RGCNConv(n, 16, R, num_bases=2),
                                    nn.RGCNConv(16, 3, R)]).to(DEVICE)

    def run(m):
        opt = torch.optim.Adam(m.parameters(), lr=0.05)
        losses = []
        for _ in range(5):
            opt.zero_grad()
            h = m[1](torch.relu(m[0](None, ei, et)), ei, et)
            loss = torch.nn.functional.cross_entropy(h, y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses

    ours, theirs = model(gnn), model(pyg_nn)
    ours.load_state_dict(theirs.state_dict())
    assert run(ours) == pytest.approx(run(theirs), rel=1e-4, abs=1e-5)


def test_bad_input_is_named():
    layer = gnn.RGCNConv(IN, OUT, R).to(DEVICE)
    x, _ = features(10, torch.float32)
    ei, et = graph(10, 30)
    with pytest.raises(TypeError, match="edge_type"):
        layer(x, ei)
    with pytest.raises(ValueError, match=r"edge_type of shape \[30\]"):
        layer(x, ei, et[:5])
    bad = et.clone()
    bad[3] = R
    with pytest.raises(ValueError, match=rf"relation {R}, outside \[0, {R}\)"):
        layer(x, ei, bad)
    bad[3] = -1
    with pytest.raises(ValueError, match="relation -1"):
        layer(x, ei, bad)
    far = ei.clone()
    far[0, 1] = 10
    with pytest.raises(ValueError, match="node id 10"):
        layer(x, far, et)
    with pytest.raises(ValueError, match=r"RGCNConv: expected x as a \(source, target\) "
                                         r"pair, got 3 items"):
        layer([x, x, x], ei, et)
    with pytest.raises(ValueError, match=r"\[num_nodes, 8\] \(in_channels\), got \(10, 3\)"):
        layer(x[:, :3], ei, et)
    with pytest.raises(NotImplementedError, match="torch.sparse_coo adjacency"):
        layer(x, torch.sparse_coo_tensor(ei, torch.ones(30, device=DEVICE), (10, 10)), et)
    adj = _parity.SparseTensor(ei[1], ei[0], et, 10)
    with pytest.raises(ValueError, match="pass edge_type=None"):
        layer(x, adj, et)
    with pytest.raises(ValueError, match="has no values"):
        layer(x, _parity.SparseTensor(ei[1], ei[0], None, 10))
    with pytest.raises(ValueError, match=r"adjacency is 11 x 11 .* 10 sources"):
        layer(x, _parity.SparseTensor(ei[1], ei[0], et, 11))
    with pytest.raises(ValueError, match="target_to_source"):
        gnn.RGCNConv(IN, OUT, R, flow="target_to_source").to(DEVICE)(x, adj)
    featureless = gnn.RGCNConv(10, OUT, R).to(DEVICE)
    with pytest.raises(ValueError, match=r"node index x holds 10, outside \[0, 10\)"):
        featureless(torch.arange(1, 11, device=DEVICE), ei, et)
    with pytest.raises(ValueError, match=r"node id 10, outside \[0, 10\).*in_channels when "
                                         r"x is None"):
        featureless(None, far, et)
    with pytest.raises(NotImplementedError, match="aggr='max'"):
        gnn.RGCNConv(IN, OUT, R, aggr="max")
    with pytest.raises(ValueError, match="both"):
        gnn.RGCNConv(IN, OUT, R, num_bases=2, num_blocks=2)
    with pytest.raises(ValueError, match="divisible"):
        gnn.RGCNConv(IN, 5, R, num_blocks=2)
    with pytest.raises(ValueError, match="num_relations"):
        gnn.RGCNConv(IN, OUT, 0)


def test_fast_rgcn_bad_input_is_named_as_itself():
    """FastRGCNConv's refusals name FastRGCNConv, and a featureless index
    past the weight rows is a ValueError (not an IndexError from indexing
    root), as RGCNConv's; so is a featureless target index x[1] past
    root's rows, in both layers."""
    ei, et = graph(10, 30)
    bad = et.clone()
    bad[3] = R
    x, _ = features(10, torch.float32)
    with pytest.raises(ValueError, match=rf"FastRGCNConv: edge_type holds relation {R}"):
        gnn.FastRGCNConv(IN, OUT, R).to(DEVICE)(x, ei, bad)
    index = torch.arange(10, device=DEVICE)
    index[4] = 12
    with pytest.raises(ValueError, match=r"FastRGCNConv: the node index x holds 12, "
                                         r"outside \[0, 10\)"):
        gnn.FastRGCNConv(10, OUT, R).to(DEVICE)(index, ei, et)
    # FastRGCNConv reads weight rows by source id: 10 sources, 9 rows.
    with pytest.raises(ValueError, match=r"FastRGCNConv: the source node ids .* holds 9, "
                                         r"outside \[0, 9\)"):
        gnn.FastRGCNConv(9, OUT, R).to(DEVICE)(torch.arange(10, device=DEVICE) % 9, ei, et)
    for cls in (gnn.RGCNConv, gnn.FastRGCNConv):
        layer = cls((10, 4), OUT, R).to(DEVICE)
        dst = torch.tensor([0, 1, 2, 3, 3, 2, 1, 0, 5, 1], device=DEVICE)
        with pytest.raises(ValueError, match=rf"{cls.__name__}: the target index x\[1\] "
                                             r"holds 5, outside \[0, 4\)"):
            layer((torch.arange(10, device=DEVICE), dst), ei % 10, et)


def test_graph_is_cached_and_rebuilt_when_written():
    from gnnc.nn import rgcn
    layer = gnn.RGCNConv(IN, OUT, R).to(DEVICE)
    x, _ = features(12, torch.float32)
    ei, et = graph(12, 50)
    sizes = (12, 12)
    first = rgcn.relation_edges(ei, et, R, sizes, True)
    again = rgcn.relation_edges(ei, et, R, sizes, True)
    assert all(a is b for a, b in zip(first[:2], again[:2]))
    # A private typed copy: the relation ids travel with the graph.
    from gnnc import _core
    assert first[0] is not ei and torch.equal(first[0], ei)
    assert torch.equal(_core._private_types(first[0]), et)
    before = layer(x, ei, et)
    et[5] = (et[5] + 1) % R  # in place: the relations change
    changed = rgcn.relation_edges(ei, et, R, sizes, True)
    assert changed[1] is not first[1]
    assert torch.equal(_core._private_types(changed[0]), et)
    fresh = gnn.RGCNConv(IN, OUT, R).to(DEVICE)
    fresh.load_state_dict(layer.state_dict())
    torch.testing.assert_close(layer(x, ei, et), fresh(x, ei.clone(), et.clone()))
    assert not torch.equal(before, layer(x, ei, et))
    # What was derived goes with its inputs (no reference to them kept).
    from gnnc.nn import _common
    tmp = et.clone()
    rgcn.relation_edges(ei, tmp, R, sizes, True)
    count = len(_common._DERIVED)
    del tmp
    assert len(_common._DERIVED) == count - 1


def test_compiled_has_no_graph_break():
    layer = gnn.RGCNConv(IN, OUT, R, num_bases=2).to(DEVICE)
    x, _ = features(14, torch.float32)
    explanation = torch._dynamo.explain(lambda a, e, t: layer(a, e, t))(x, *graph(14, 40))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    f = torch.compile(lambda a, e, t: layer(a, e, t), fullgraph=True)
    for seed in (1, 2):  # a second graph: looked up again
        ei, et = graph(14, 40, seed=seed)
        torch.testing.assert_close(f(x, ei, et), layer(x, ei, et))


def test_compiled_with_dynamic_shapes():
    """torch.compile(dynamic=True): the node counts are symbolic, and the
    bipartite flag of the configuration was a SymBool the IR builder refused
    on the first call."""
    layer = gnn.RGCNConv(IN, OUT, R, num_bases=2).to(DEVICE)
    torch._dynamo.reset()
    f = torch.compile(lambda a, e, t: layer(a, e, t), fullgraph=True, dynamic=True)
    for n, e, seed in ((14, 40, 1), (20, 70, 2)):
        x, _ = features(n, torch.float32)
        x.requires_grad_()
        ei, et = graph(n, e, seed=seed)
        eager = layer(x, ei, et)
        (gx_eager,) = torch.autograd.grad(eager.sum(), x)
        out = f(x, ei, et)
        torch.testing.assert_close(out, eager)
        (gx,) = torch.autograd.grad(out.sum(), x)
        torch.testing.assert_close(gx, gx_eager)


@pytest.mark.parametrize("half", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("kw", DECOMPOSITIONS, ids=IDS)
def test_autocast_matches_float64(half, kw):
    """Under torch.autocast the transform and the edge pass run in the half
    type (docs/Python.md, "Mixed precision"; the backward's per-(source,
    relation) sums in f32, rounded once): within 4 bf16 / f16 per-op
    tolerances of PyG's layer in float64, gradients within 10."""
    tol = {torch.bfloat16: 1e-2, torch.float16: 2e-3}[half]
    ours, pyg = layers(torch.float32, **kw)
    pyg = pyg.double()
    x = _parity.features(30, torch.float32, IN, seed=2).to(half).float().to(DEVICE)
    x.requires_grad_()
    x64 = x.detach().double().requires_grad_()
    ei, et = graph(30, 200)
    with torch.autocast(DEVICE.type, dtype=half):
        out = ours(x, ei, et)
    assert ours._gnnc_function[1][2] == {torch.bfloat16: "bf16", torch.float16: "f16"}[half]
    want = pyg(x64, ei, et)
    scale = 1 + want.abs().max().item()
    assert (out.double() - want).abs().max().item() <= 4 * tol * scale
    dy = torch.randn(want.shape, generator=torch.Generator().manual_seed(4),
                     dtype=torch.float64).to(DEVICE)
    got = torch.autograd.grad(out, [x] + list(ours.parameters()), dy.to(out.dtype))
    ref = torch.autograd.grad(want, [x64] + list(pyg.parameters()), dy)
    for a, b in zip(got, ref):
        assert (a.double() - b).abs().max().item() <= 10 * tol * (1 + b.abs().max().item())


@pytest.mark.parametrize("kw", DECOMPOSITIONS, ids=IDS)
@pytest.mark.parametrize("aggr", ["mean", "add"])
def test_fast_rgcn_equals_pyg(kw, aggr):
    ours = gnn.FastRGCNConv(IN, OUT, R, aggr=aggr, **kw)
    pyg = pyg_nn.FastRGCNConv(IN, OUT, R, aggr=aggr, **kw)
    ours, pyg = _parity.same_weights(ours, pyg, torch.float32)
    ours, pyg = ours.to(DEVICE), pyg.to(DEVICE)
    x, xp = features(30, torch.float32)
    ei, et = graph(30, 200)
    out = check(ours, pyg, x, xp, ei, et, torch.float32)
    # A SparseTensor holding the relation ids: the same computation (PyG's
    # own FastRGCNConv would run RGCNConv's untyped spmm on one).
    adj = _parity.SparseTensor(ei[1], ei[0], et, 30)
    torch.testing.assert_close(ours(x, adj), out, **_parity.tol(torch.float32))


@pytest.mark.parametrize("index", ["none", "permuted"])
def test_fast_rgcn_featureless_equals_pyg(index):
    """PyG's FastRGCNConv reads weight[r, j] for source j whatever the node
    index x holds (RGCNConv reads weight[r, x[j]]); the root term reads
    root[x]."""
    n = 25
    ours = gnn.FastRGCNConv(n, OUT, R, num_bases=2)
    pyg = pyg_nn.FastRGCNConv(n, OUT, R, num_bases=2)
    ours, pyg = _parity.same_weights(ours, pyg, torch.float32)
    ours, pyg = ours.to(DEVICE), pyg.to(DEVICE)
    ei, et = graph(n, 120)
    x = None if index == "none" else torch.randperm(
        n, generator=torch.Generator().manual_seed(3)).to(DEVICE)
    check(ours, pyg, x, x, ei, et, torch.float32)


def test_featureless_rows_are_cached_across_calls(monkeypatch):
    """x=None: the same typed graph from call to call (built once)."""
    from gnnc.nn import rgcn
    builds = []
    real = rgcn._build
    monkeypatch.setattr(rgcn, "_build", lambda *a: builds.append(1) or real(*a))
    layer = gnn.RGCNConv(12, OUT, R).to(DEVICE)
    ei, et = graph(12, 40)
    first = layer(None, ei, et)
    torch.testing.assert_close(layer(None, ei, et), first)
    assert len(builds) == 1
