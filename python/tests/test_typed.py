"""Typed graphs (issue 31 item 4): `gnnc.Graph(..., edge_type=)`, functions on
`!gnn.graph<typed>` built with `gnnc.ir` (the relation forms of gather and
reduce), their gradients against PyTorch and finite differences, and the
refusals: an untyped graph, relation ids out of range. CPU by default, CUDA
with GNNC_TEST_DEVICE=cuda."""

import os

import pytest
import torch

gnnc = pytest.importorskip("gnnc")
import gnnc.ir as ir  # noqa: E402

DEVICE = torch.device(os.environ.get("GNNC_TEST_DEVICE", "cpu"))
if DEVICE.type == "cuda" and not torch.cuda.is_available():
    pytest.skip("GNNC_TEST_DEVICE=cuda without a usable GPU", allow_module_level=True)

R, C = 3, 4


def relational(dtype: str, weighted: bool, bipartite: bool = False):
    """out[d] = sum_{e -> d} w_e h[src(e), type(e)] (RGCN's edge pass)."""
    name = f"rel_{dtype}_{int(weighted)}_{int(bipartite)}"
    f = ir.Builder(name, dtype, bipartite=bipartite, typed=True)
    h = f.arg([None, R, C], side="src" if bipartite else None, name="h")
    w = f.arg([None], edge=True, name="w") if weighted else None
    m = f.gather("src", h, relation=True)
    if weighted:
        m = f.generic([(0, 1), (0,), (0, 1)], ["parallel", "parallel"], [m, w],
                      [f.empty([None, C], f.dim(m))], lambda a, b, _: a * b)
    return gnnc.compile(f.finish(f.reduce("sum", m)), function=name)


def graph(n, e, seed=0, relations=R):
    g = torch.Generator().manual_seed(seed)
    ei = torch.randint(0, max(n, 1), (2, e), generator=g)
    et = torch.randint(0, relations, (e,), generator=g)
    if e:
        ei[:, 0] = torch.tensor([0, 0])      # a self-loop
        ei[:, 1] = ei[:, 2]                   # a duplicate edge
        et[1] = et[2]
    return ei.to(DEVICE), et.to(DEVICE)


def reference(h, ei, et, w, n_dst):
    msg = h[ei[0], et]
    if w is not None:
        msg = msg * w[:, None]
    out = torch.zeros(n_dst, h.size(2), dtype=h.dtype, device=h.device)
    return out.index_add(0, ei[1], msg)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n,e", [(30, 200), (7, 0), (0, 0)])
def test_relation_gather_sum_and_gradients(weighted, n, e):
    fn = relational("f64", weighted)
    ei, et = graph(n, e)
    g = gnnc.Graph(ei, n, edge_type=et)
    h = torch.randn(n, R, C, dtype=torch.float64, device=DEVICE, requires_grad=True)
    w = torch.rand(e, dtype=torch.float64, device=DEVICE, requires_grad=True)
    args = (h, w) if weighted else (h,)
    got = fn(g, *args)
    want = reference(h, ei, et, w if weighted else None, n)
    torch.testing.assert_close(got, want)
    dy = torch.randn_like(want)
    grads = torch.autograd.grad(got, args, dy)
    wants = torch.autograd.grad(want, args, dy)
    for a, b in zip(grads, wants):
        torch.testing.assert_close(a, b)
    if e and DEVICE.type == "cpu":
        assert torch.autograd.gradcheck(lambda *a: fn(g, *a), args)


def test_bipartite_typed_graph():
    fn = relational("f32", True, bipartite=True)
    g = torch.Generator().manual_seed(3)
    ei = torch.stack([torch.randint(0, 9, (50,), generator=g),
                      torch.randint(0, 4, (50,), generator=g)]).to(DEVICE)
    et = torch.randint(0, R, (50,), generator=g).to(DEVICE)
    h = torch.randn(9, R, C, device=DEVICE, requires_grad=True)
    w = torch.rand(50, device=DEVICE)
    graph_ = gnnc.Graph(ei, 9, edge_type=et)
    # A bipartite call: the sides by num_nodes=(num_src, num_dst).
    got = fn(graph_, h, w, num_nodes=(9, 4))
    want = reference(h, ei, et, w, 4)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    dh, = torch.autograd.grad(got.sum(), h)
    dh_want, = torch.autograd.grad(want.sum(), h)
    torch.testing.assert_close(dh, dh_want, rtol=1e-5, atol=1e-5)


def test_typed_graph_refusals():
    fn = relational("f32", False)
    ei, et = graph(20, 60)
    h = torch.randn(20, R, C, device=DEVICE)
    # An edge_index, or a Graph without types, where a typed graph is taken.
    with pytest.raises(TypeError, match=r"takes a typed graph .*gnnc.Graph\(edge_index, "
                                        r"num_nodes, edge_type=...\)"):
        fn(ei, h, num_nodes=20)
    with pytest.raises(TypeError, match="this gnnc.Graph has no edge_type"):
        fn(gnnc.Graph(ei, 20), h)
    # Relation ids past the function's count, or negative. Past it: one
    # ValueError before running on either device (on the CPU the reference
    # evaluator stopped at the op with a located CompileError).
    errors = (ValueError, RuntimeError, gnnc.CompileError)
    with pytest.raises(ValueError, match=r"rel_f32_0_0'? was generated for 3 relations "
                                         r"but the graph has relation id 5"):
        fn(gnnc.Graph(ei, 20, edge_type=et + R), h)
    one = et.clone()
    one[7] = R
    with pytest.raises(ValueError, match=r"generated for 3 relations but the graph has "
                                         r"relation id 3" + (r" \(edge 7;" if DEVICE.type
                                                             == "cpu" else "")):
        fn(gnnc.Graph(ei, 20, edge_type=one), h.requires_grad_())
    with pytest.raises(errors, match=r"negative relation id|not a relation id"):
        bad = et.clone()
        bad[5] = -1
        fn(gnnc.Graph(ei, 20, edge_type=bad), h)
    # edge_type's shape and type are checked where the graph is made.
    with pytest.raises(ValueError, match=r"shape \[60\]"):
        gnnc.Graph(ei, 20, edge_type=et[:10])
    with pytest.raises(ValueError, match="int64 or int32"):
        gnnc.Graph(ei, 20, edge_type=et.float())
    with pytest.raises(TypeError, match="must be a torch.Tensor"):
        gnnc.Graph(ei, 20, edge_type=[0] * 60)
    # The builder: the relation forms need a typed graph, a static count.
    f = ir.Builder("untyped", "f32")
    x = f.arg([None, R, C])
    with pytest.raises(ValueError, match=r"typed graph \(Builder\(typed=True\)\)"):
        f.gather("src", x, relation=True)
    f = ir.Builder("typed", "f32", typed=True)
    v = f.arg([None])
    x = f.arg([None, C])
    with pytest.raises(ValueError, match=r"\[nodes, relations, \.\.\.\]"):
        f.gather("src", v, relation=True)
    e = f.gather("src", x)
    with pytest.raises(ValueError, match="the relation form sums"):
        f.reduce("max", e, relations=R)


def test_relation_reduce_refuses_ids_past_its_count():
    """A function whose only relation form is a reduce into [nodes, R, C]:
    its count is R too, refused before running on either device."""
    f = ir.Builder("scatter_rel", "f32", typed=True)
    x = f.arg([None, C])
    out = f.reduce("sum", f.gather("src", x), relations=R)
    fn = gnnc.compile(f.finish(out), function="scatter_rel")
    ei, et = graph(20, 60)
    x = torch.randn(20, C, device=DEVICE)
    assert fn(gnnc.Graph(ei, 20, edge_type=et), x).shape == (20, R, C)
    assert fn.signature["relations"] == R
    plain = ir.Builder("plain", "f32")
    h = plain.arg([None, C])
    assert gnnc.compile(plain.finish(plain.reduce("sum", plain.gather("src", h))),
                        function="plain").signature["relations"] == 0
    one = et.clone()
    one[9] = R + 1
    with pytest.raises(ValueError, match=r"generated for 3 relations but the graph has "
                                         r"relation id 4"):
        fn(gnnc.Graph(ei, 20, edge_type=one), x)


def test_typed_function_runs_unchanged_with_int32_types_and_reorder():
    fn = relational("f64", True)
    ei, et = graph(25, 120, seed=5)
    h = torch.randn(25, R, C, dtype=torch.float64, device=DEVICE)
    w = torch.rand(120, dtype=torch.float64, device=DEVICE)
    g = gnnc.Graph(ei, 25, edge_type=et.int())
    want = reference(h, ei, et, w, 25)
    torch.testing.assert_close(fn(g, h, w), want)
    assert g.edge_type.dtype == torch.int64 and "typed" in repr(g)
    # A renumbered graph keeps each edge's relation (node tensors in and out
    # in the caller's order).
    torch.testing.assert_close(fn(g.reorder("degree"), h, w), want)


@pytest.mark.parametrize("dtype,half", [("bf16", torch.bfloat16), ("f16", torch.float16)])
def test_half_typed_function_and_gradient(dtype, half):
    """bf16 / f16 storage: the relation gather reads half rows, the relation
    reduce (the gradient) sums each (node, relation) row in f32 and rounds
    it once (on CUDA: an f32 workspace, then one rounding kernel)."""
    fn = relational(dtype, True)
    ei, et = graph(40, 300, seed=7)
    g = gnnc.Graph(ei, 40, edge_type=et)
    h = torch.randn(40, R, C, device=DEVICE).to(half).requires_grad_()
    w = torch.rand(300, device=DEVICE).to(half)
    got = fn(g, h, w)
    assert got.dtype == half
    want = reference(h.detach().float(), ei, et, w.float(), 40)
    tol = {torch.bfloat16: 2e-2, torch.float16: 2e-3}[half]
    torch.testing.assert_close(got.float(), want, rtol=tol, atol=tol * 4)
    dy = torch.randn(40, C, device=DEVICE).to(half)
    dh, = torch.autograd.grad(got, h, dy)
    assert dh.dtype == half
    hf = h.detach().float().requires_grad_()
    dh_want, = torch.autograd.grad(reference(hf, ei, et, w.float(), 40), hf, dy.float())
    torch.testing.assert_close(dh.float(), dh_want, rtol=tol, atol=tol * 4)


def test_rows_the_backward_does_not_read_are_not_kept(monkeypatch):
    """The relation gather's backward needs the graph, not h: the autograd
    step saves an empty tensor in h's place (inputs of _DROP_BYTES or more;
    lowered here so that a small h takes that path) and the gradients stay
    right."""
    from gnnc import _core
    monkeypatch.setattr(_core, "_DROP_BYTES", 0)
    fn = relational("f64", False)
    assert fn._layout.sized == (0,) and fn._layout.small == ()  # (h: sized by the graph)
    ei, et = graph(30, 200, seed=9)
    h = torch.randn(30, R, C, dtype=torch.float64, device=DEVICE, requires_grad=True)
    out = fn(gnnc.Graph(ei, 30, edge_type=et), h)
    saved = [t for t in out.grad_fn.saved_tensors if t.dim() == 3 or t.numel() == 0]
    assert saved and all(t.numel() == 0 for t in saved)
    dy = torch.randn_like(out)
    dh, = torch.autograd.grad(out, h, dy)
    want = reference(h, ei, et, None, 30)
    dh_want, = torch.autograd.grad(want, h, dy)
    torch.testing.assert_close(dh, dh_want)


def test_relation_ids_written_after_a_call_are_checked_again():
    """A write to a gnnc.Graph's edge types through PyTorch ops (which bumps
    their version) is seen by the next call on either device: the graph's
    structures are built again, and the largest relation id (kept on the
    Graph after a call) is checked again."""
    fn = relational("f32", False)
    ei, et = graph(20, 60)
    h = torch.randn(20, R, C, device=DEVICE)
    g = gnnc.Graph(ei, 20, edge_type=et)
    first = fn(g, h)
    torch.testing.assert_close(fn(g, h), first)
    # A write of another valid id: the structures are built again from it.
    g.edge_type[11] = (int(g.edge_type[11]) + 1) % R
    want = fn(gnnc.Graph(ei, 20, edge_type=g.edge_type.clone()), h)
    assert not torch.equal(want, first)
    torch.testing.assert_close(fn(g, h), want)
    g.edge_type[11] = R + 2
    with pytest.raises(ValueError, match=r"generated for 3 relations but the graph has "
                                         r"relation id 5 \(edge 11;"):
        fn(g, h)


def test_typed_function_on_a_graph_under_torch_compile_fullgraph():
    """A typed function called with a gnnc.Graph inside torch.compile(
    fullgraph=True): no graph break (the relation-id check read the edge
    types' version counter through is_inference(), which dynamo refuses);
    values and gradients as eager, and ids past the relation count refused
    when the compiled code runs with eager's ValueError (it was the op's
    RuntimeError "[CompileError] ..."), also after a write to the ids of a
    graph the compiled code ran on."""
    fn = relational("f64", weighted=False)
    ei, et = graph(7, 30, seed=4)
    g = gnnc.Graph(ei, 7, edge_type=et)
    h = torch.randn(7, R, C, dtype=torch.float64, device=DEVICE, requires_grad=True)

    def layer(h, g):
        return torch.tanh(fn(g, h * 2))

    torch._dynamo.reset()
    compiled = torch.compile(layer, fullgraph=True, backend="aot_eager")
    got, want = compiled(h, g), layer(h, g)
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(torch.autograd.grad(got.sum(), h)[0],
                               torch.autograd.grad(want.sum(), h)[0])
    bad = gnnc.Graph(ei, 7, edge_type=torch.full_like(et, R))
    refusal = (r"^gnnc: @rel_f64_0_0 was generated for 3 relations but the graph has "
               r"relation id 3 \(edge 0; ids must be below the relation count\)$")
    with pytest.raises(ValueError, match=refusal):
        layer(h, bad)
    with pytest.raises(ValueError, match=refusal):
        compiled(h, bad)
    g.edge_type[5] = R + 1
    with pytest.raises(ValueError, match=r"relation id 4 \(edge 5;"):
        compiled(h, g)
