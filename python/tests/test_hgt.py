"""gnnc.nn.HGTConv against PyG's HGTConv with the same weights: outputs and
the gradients of the features and of every parameter on a heterogeneous
graph (a node type that receives no messages, a destination without incoming
edges, duplicate edges, zero-edge relations, zero-node types), PyG's
initialisation and lazy sizing, gradcheck, the cached concatenated graph,
refused inputs, torch.compile; the CUDA variant is skipped without a GPU."""

import warnings

import pytest
import torch

gnnc = pytest.importorskip("gnnc")
gnn = pytest.importorskip("gnnc.nn")
pyg_nn = pytest.importorskip("torch_geometric.nn")

import _parity  # noqa: E402
from gnnc import _core  # noqa: E402
from gnnc.nn import _common  # noqa: E402

warnings.filterwarnings("ignore", category=FutureWarning)

OUT = 8
# 'term' only sends (no output), 'paper' receives over three edge types
# (its 8 features = OUT: the skip blend applies), 'venue' receives over a
# relation that can be empty.
NODES = {"paper": 8, "author": 5, "term": 3, "venue": 4}
EDGES = [("author", "writes", "paper"), ("paper", "rev_writes", "author"),
         ("paper", "cites", "paper"), ("term", "about", "paper"),
         ("paper", "in", "venue")]
METADATA = (list(NODES), EDGES)

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not (torch.cuda.is_available() and gnnc.cuda_available()), reason="no usable GPU"))]


def graph(counts, edges=12, seed=1, empty=(), device="cpu"):
    """A random edge_index per edge type (the relations in `empty` and those
    touching a zero-node type have no edges); 'paper' 0 receives nothing and
    every relation with edges repeats its first edge."""
    g = torch.Generator().manual_seed(seed)
    out = {}
    for r in EDGES:
        ns, nd = counts[r[0]], counts[r[2]]
        if r in empty or ns == 0 or nd == 0:
            out[r] = torch.zeros((2, 0), dtype=torch.int64)
            continue
        src = torch.randint(0, ns, (edges,), generator=g)
        low = 1 if r[2] == "paper" else 0
        dst = torch.randint(low, max(nd, low + 1), (edges,), generator=g)
        ei = torch.stack([src, dst])
        out[r] = torch.cat([ei, ei[:, :1]], dim=1)  # a duplicate edge
    return {r: ei.to(device) for r, ei in out.items()}


def features(counts, channels, dtype, device="cpu", seed=2):
    return {t: _parity.features(n, dtype, channels[t], seed=seed + k).to(device)
            for k, (t, n) in enumerate(counts.items())}


def randomise(name):
    return name.endswith("bias") or name.startswith(("skip", "p_rel"))


def layers(in_channels, heads, dtype, device="cpu"):
    pyg = pyg_nn.HGTConv(in_channels, OUT, METADATA, heads=heads)
    ours = gnn.HGTConv(in_channels, OUT, METADATA, heads=heads)
    ours, pyg = _parity.same_weights(ours, pyg, dtype, randomise)
    return ours.to(device), pyg


def leaves(x):
    return {t: v.detach().clone().requires_grad_() for t, v in x.items()}


def check(ours, pyg, x, edge_index, dtype, tol=None):
    """Outputs (same keys, same order) and the gradients of x and of every
    parameter under one random output gradient."""
    tol = tol or _parity.tol(dtype)
    xo, xp = leaves(x), leaves({t: v.cpu() for t, v in x.items()})
    got = ours(xo, edge_index)
    want = pyg(xp, {r: ei.cpu() for r, ei in edge_index.items()})
    assert list(got) == list(want)
    g = torch.Generator().manual_seed(4)
    dys = {t: torch.randn(w.shape, generator=g, dtype=torch.float64).to(dtype)
           for t, w in want.items()}
    for t in want:
        torch.testing.assert_close(got[t].cpu(), want[t], **tol)
    names = [n for n, _ in ours.named_parameters()]
    assert names == [n for n, _ in pyg.named_parameters()]
    mine = list(xo.values()) + list(ours.parameters())
    theirs = list(xp.values()) + list(pyg.parameters())
    ga = torch.autograd.grad([got[t] for t in want], mine,
                             [dys[t].to(got[t].device) for t in want], allow_unused=True)
    gb = torch.autograd.grad([want[t] for t in want], theirs, [dys[t] for t in want],
                             allow_unused=True)
    for name, a, b in zip(list(xo) + names, ga, gb):
        if b is None:
            assert a is None or not a.any(), name
        else:
            assert a is not None, name
            torch.testing.assert_close(a.cpu(), b, **tol, msg=lambda m: f"{name}: {m}")
    return got


COUNTS = {"paper": 9, "author": 6, "term": 4, "venue": 3}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("heads", [1, 2])
@pytest.mark.parametrize("channels", ["dict", "int"])
def test_matches_pyg(channels, heads, dtype):
    per_type = NODES if channels == "dict" else {t: OUT for t in NODES}
    ours, pyg = layers(per_type if channels == "dict" else OUT, heads, dtype)
    x = features(COUNTS, per_type, dtype)
    out = check(ours, pyg, x, graph(COUNTS), dtype)
    assert set(out) == {"paper", "author", "venue"}  # 'term' receives nothing


@pytest.mark.parametrize("case", ["empty-relations", "zero-nodes", "no-sources",
                                  "no-destinations"])
def test_empty_relations_and_node_types_match_pyg(case):
    dtype = torch.float32
    counts, empty = dict(COUNTS), ()
    if case == "empty-relations":
        empty = (("paper", "in", "venue"), ("term", "about", "paper"))
    elif case == "zero-nodes":
        counts.update(author=0, venue=0)
    elif case == "no-sources":
        counts.update(paper=0, author=0, term=0)
    else:
        counts.update(author=0, venue=0, paper=0)
    ours, pyg = layers(NODES, 2, dtype)
    x = features(counts, NODES, dtype)
    out = check(ours, pyg, x, graph(counts, empty=empty), dtype)
    if case == "empty-relations":  # no message: out_lin's bias (4 != OUT: no skip)
        want = ours.out_lin.lins["venue"].bias.expand(3, OUT)
        torch.testing.assert_close(out["venue"], want)


def adjacency(edge_index, counts, r, layout):
    """PyG's adj_t of edge type r ([num_dst, num_src]): COO as given
    (uncoalesced: duplicate edges stay entries), CSR or CSC (coalesced)."""
    shape = (counts[r[-1]], counts[r[0]])
    coo = torch.sparse_coo_tensor(edge_index.flip(0),
                                  torch.ones(edge_index.size(1), device=edge_index.device),
                                  shape)
    if layout == "coo":
        return coo
    return coo.coalesce().to_sparse_csr() if layout == "csr" else \
        coo.coalesce().to_sparse_csc()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["coo", "csr", "csc", "mixed"])
def test_sparse_adjacency_matches_pyg(layout, device):
    """Each edge type's graph as PyG's adj_t (torch.sparse COO, CSR, CSC, or
    a mix with edge_index tensors), given to both layers: the same outputs
    and gradients (PyG turns each into an edge_index, duplicate COO entries
    kept); the result equals the edge_index one where no entry is merged."""
    dtype = torch.float64
    ours, pyg = layers(NODES, 2, dtype, device)
    x = features(COUNTS, NODES, dtype, device)
    ei = graph(COUNTS, device=device)
    kinds = ["coo", "csr", "csc", None, "coo"] if layout == "mixed" else [layout] * 5
    adj = {r: ei[r] if k is None else adjacency(ei[r], COUNTS, r, k)
           for r, k in zip(EDGES, kinds)}
    got = check(ours, pyg, x, adj, dtype)
    if layout == "coo":
        want = ours(x, ei)
        for t in want:
            torch.testing.assert_close(got[t], want[t], **_parity.tol(dtype))
    # Cached: the same adjacencies give the same concatenated graph.
    from gnnc.nn import hgt
    builds, real = [], hgt._concatenate
    try:
        hgt._concatenate = lambda *a: builds.append(1) or real(*a)
        ours(x, adj)
        ours(x, adj)
    finally:
        hgt._concatenate = real
    assert not builds


def test_sparse_adjacency_under_torch_compile():
    # Dynamo does not trace sparse tensors: with one among the edge types the
    # layer runs outside the traced graph, with the eager result.
    ours, _ = layers(NODES, 2, torch.float32)
    x, ei = features(COUNTS, NODES, torch.float32), graph(COUNTS)
    adj = {r: adjacency(e, COUNTS, r, "csr") for r, e in ei.items()}
    want = ours(x, adj)
    torch._dynamo.reset()
    got = torch.compile(ours)(x, adj)
    for t in want:
        torch.testing.assert_close(got[t], want[t], **_parity.tol(torch.float32))


def test_edge_type_subset_and_order():
    """Edge types missing from edge_index_dict (or all of them) aggregate
    nothing; its order does not change the result. (PyG's k_rel/v_rel assume edge_index_dict is
    in metadata order: the reversed dict is compared with gnnc's own result.)"""
    dtype = torch.float64
    ours, pyg = layers(NODES, 2, dtype)
    x = features(COUNTS, NODES, dtype)
    ei = graph(COUNTS)
    subset = {r: ei[r] for r in (EDGES[0], EDGES[2], EDGES[4])}
    check(ours, pyg, x, subset, dtype)
    nothing = ours(x, {})  # no edge type at all (PyG fails): no message
    assert list(nothing) == ["paper", "author", "venue"]
    bias = ours.out_lin.lins["venue"].bias
    torch.testing.assert_close(nothing["venue"], bias.expand(COUNTS["venue"], OUT))
    forward = ours(x, ei)
    backward = ours(x, dict(reversed(list(ei.items()))))
    assert list(forward) == list(backward)
    for t in forward:
        torch.testing.assert_close(backward[t], forward[t], **_parity.tol(dtype))


def test_gradcheck():
    layer = gnn.HGTConv(NODES, 4, METADATA, heads=2).double()
    with torch.no_grad():
        for name, p in layer.named_parameters():
            if randomise(name):
                p.uniform_(-0.5, 0.5)
    counts = {"paper": 4, "author": 3, "term": 2, "venue": 2}
    ei = graph(counts, edges=5)
    x = features(counts, NODES, torch.float64)
    types = list(x)

    def run(*xs):
        out = layer(dict(zip(types, xs)), ei)
        return tuple(out.values())

    assert torch.autograd.gradcheck(run, tuple(v.requires_grad_() for v in x.values()))


def test_initialisation_and_state_dict_match_pyg():
    torch.manual_seed(0)
    pyg = pyg_nn.HGTConv(NODES, OUT, METADATA, heads=2)
    torch.manual_seed(0)
    ours = gnn.HGTConv(NODES, OUT, METADATA, heads=2)
    a, b = pyg.state_dict(), ours.state_dict()
    assert list(a) == list(b)
    for k in a:
        assert torch.equal(a[k], b[k]), k
    assert repr(ours) == repr(pyg) == f"HGTConv(-1, {OUT}, heads=2)"
    with torch.no_grad():
        for p in ours.parameters():
            p.uniform_(-1, 1)
    pyg.load_state_dict(ours.state_dict())  # and back
    for k, v in ours.state_dict().items():
        assert torch.equal(pyg.state_dict()[k], v), k


def test_lazy_in_channels_like_pyg():
    x = features(COUNTS, NODES, torch.float32)
    ei = graph(COUNTS)
    torch.manual_seed(0)
    pyg = pyg_nn.HGTConv(-1, OUT, METADATA, heads=2)
    pyg(x, ei)
    torch.manual_seed(0)
    ours = gnn.HGTConv(-1, OUT, METADATA, heads=2)
    ours(x, ei)
    assert ours.kqv_lin.lins["author"].weight.shape == (3 * OUT, NODES["author"])
    for (k, a), (k2, b) in zip(pyg.state_dict().items(), ours.state_dict().items()):
        assert k == k2 and torch.equal(a, b), k
    # A lazy layer takes a materialised state dict.
    lazy = gnn.HGTConv({t: -1 for t in NODES}, OUT, METADATA, heads=2)
    lazy.load_state_dict(pyg.state_dict())
    for t, v in pyg(x, ei).items():
        torch.testing.assert_close(lazy(x, ei)[t], v, **_parity.tol(torch.float32))


def test_concatenated_graph_is_cached_and_rebuilt_on_change(monkeypatch):
    dtype = torch.float64
    ours, pyg = layers(NODES, 2, dtype)
    x = features(COUNTS, NODES, dtype)
    ei = graph(COUNTS)
    graphs, builds = [], []
    propagate = _common.propagate
    build = _core._GraphCache._build

    def spy(layer, template, config, edge_index, *args, **kw):
        graphs.append(edge_index)
        return propagate(layer, template, config, edge_index, *args, **kw)

    def counting(self, *args):
        builds.append(args[0])
        return build(self, *args)

    monkeypatch.setattr(_common, "propagate", spy)
    monkeypatch.setattr(_core._GraphCache, "_build", counting)
    check(ours, pyg, x, ei, dtype)
    check(ours, pyg, x, ei, dtype)
    assert len(graphs) == 2 and graphs[0] is graphs[1] and len(builds) == 1
    assert graphs[0].shape == (2, sum(e.size(1) for e in ei.values()))
    ei[("author", "writes", "paper")][1, 3] = 0  # in place: rebuilt, checked
    check(ours, pyg, x, ei, dtype)
    assert graphs[2] is not graphs[0] and len(builds) == 2
    # Other node counts: another concatenated graph for the same tensors.
    more = dict(COUNTS, author=COUNTS["author"] + 2)
    check(ours, pyg, features(more, NODES, dtype), ei, dtype)
    assert graphs[3] is not graphs[2] and len(builds) == 3


def test_refused_and_bad_inputs():
    layer = gnn.HGTConv(NODES, OUT, METADATA, heads=2)
    x = features(COUNTS, NODES, torch.float32)
    ei = graph(COUNTS)
    r = EDGES[0]
    with pytest.raises(ValueError, match=r"adjacency of edge type .* is 9 x 7 but"):
        adj = torch.sparse_coo_tensor(ei[r].flip(0), torch.ones(ei[r].size(1)),
                                      (COUNTS["paper"], COUNTS["author"] + 1))
        layer(x, {**ei, r: adj})
    with pytest.raises(ValueError, match="target_to_source|2-d sparse adjacency"):
        adj = torch.sparse_coo_tensor(ei[r][:1], torch.ones(ei[r].size(1)),
                                      (COUNTS["author"],))
        layer(x, {**ei, r: adj})
    with pytest.raises(ValueError, match="not among the layer's edge types"):
        layer(x, {**ei, ("author", "likes", "paper"): ei[r]})
    with pytest.raises(ValueError, match=r"x_dict\['author'\] with 5 channels"):
        layer(dict(x, author=torch.randn(6, 4)), ei)
    with pytest.raises(ValueError, match="needs the features of its source type"):
        layer({t: v for t, v in x.items() if t != "author"}, ei)
    bad = ei[r].clone()
    bad[0, 2] = COUNTS["author"]
    with pytest.raises(ValueError, match=r"holds source id 6, outside \[0, 6\)"):
        layer(x, {**ei, r: bad})
    bad = ei[r].clone()
    bad[1, 0] = -1
    with pytest.raises(ValueError, match="holds destination id -1"):
        layer(x, {**ei, r: bad})
    with pytest.raises(TypeError, match="int64"):
        layer(x, {**ei, r: ei[r].float()})
    with pytest.raises(ValueError, match=r"shape \[2, num_edges\]"):
        layer(x, {**ei, r: ei[r].t()})
    with pytest.raises(TypeError, match="float64"):
        layer(dict(x, author=x["author"].double()), ei)
    with pytest.raises(ValueError, match="divisible"):
        gnn.HGTConv(NODES, OUT, METADATA, heads=3)
    with pytest.raises(NotImplementedError, match="aggr"):
        gnn.HGTConv(NODES, OUT, METADATA, aggr="mean")
    with pytest.raises(ValueError, match="edge types as"):
        gnn.HGTConv(NODES, OUT, (list(NODES), [("author", "paper")]))


def test_torch_compile_and_meta():
    ours, _ = layers(NODES, 2, torch.float32)
    x, ei = features(COUNTS, NODES, torch.float32), graph(COUNTS)
    want = ours(x, ei)
    assert torch._dynamo.explain(ours)(x, ei).graph_break_count == 0
    got = torch.compile(ours, fullgraph=True)(x, ei)
    for t in want:
        torch.testing.assert_close(got[t], want[t], **_parity.tol(torch.float32))
    # Compiled, the concatenated graph is still built once per graph (the
    # gnnc_nn::hgt_graph op), not once per step.
    from gnnc.nn import hgt
    builds = []
    real = hgt._concatenate
    try:
        hgt._concatenate = lambda *a: builds.append(1) or real(*a)
        compiled = torch.compile(ours, fullgraph=True)
        fresh = graph(COUNTS)
        for _ in range(3):
            compiled(x, fresh)
    finally:
        hgt._concatenate = real
    assert len(builds) == 1
    bad = dict(fresh)
    r = next(iter(bad))
    bad[r] = bad[r].clone()
    bad[r][0, 0] = COUNTS[r[0]]
    # The message names the user's edge type, the id and the range, as it
    # does outside torch.compile (the op once named a placeholder).
    with pytest.raises(ValueError) as info:
        ours(x, bad)
    eager = str(info.value)
    with pytest.raises(ValueError) as info:
        compiled(x, bad)
    assert str(info.value) == eager
    assert f"edge_index_dict[{r!r}] holds source id {COUNTS[r[0]]}, outside " \
        f"[0, {COUNTS[r[0]]})" in eager
    meta = ours.to("meta")({t: v.to("meta") for t, v in x.items()},
                           {r: e.to("meta") for r, e in ei.items()})
    assert {t: v.shape for t, v in meta.items()} == {t: v.shape for t, v in want.items()}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("heads", [1, 2])
def test_device_matches_pyg_on_the_cpu(device, dtype, heads):
    ours, pyg = layers(NODES, heads, dtype, device)
    x = features(COUNTS, NODES, dtype, device)
    tol = (dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else
           dict(rtol=1e-9, atol=1e-9))
    ei = graph(COUNTS, device=device)
    check(ours, pyg, x, ei, dtype, tol)
    counts = dict(COUNTS, author=0)
    check(ours, pyg, features(counts, NODES, dtype, device),
          graph(counts, device=device, empty=(EDGES[2],)), dtype, tol)


@pytest.mark.parametrize("device", DEVICES)
def test_autocast_bfloat16_matches_float64(device):
    """Under torch.autocast(bfloat16) the attention runs in bf16 (its gnnc
    function's type) within 4 bf16 per-op tolerances of PyG's layer in
    float64 (docs/Semantics.md)."""
    ours, pyg = layers(NODES, 2, torch.float32, device)
    pyg = pyg.double()
    x = {t: v.to(torch.bfloat16).float() for t, v in features(COUNTS, NODES, torch.float32,
                                                               device).items()}
    ei = graph(COUNTS, device=device)
    with torch.autocast(torch.device(device).type, dtype=torch.bfloat16):
        out = ours(x, ei)
    assert ours._gnnc_function[1][2] == "bf16"
    want = pyg({t: v.double().cpu() for t, v in x.items()},
               {r: e.cpu() for r, e in ei.items()})
    for t in want:
        err = (out[t].double().cpu() - want[t]).abs().max().item()
        assert err <= 4 * 1e-2 * (1 + want[t].abs().max().item()), (t, err)
