"""gnnc.ir: gnn functions built op by op through the native builders.

Built functions compile and run like text modules (values, gradients),
print and parse back to themselves, and mistakes are refused where they are
made (a ValueError naming the op, or the verifier's diagnostics located at
the Python line that built the op). With GNNC_TEST_DEVICE=cuda the same
tests run on CUDA tensors.
"""

import inspect
import itertools
import math
import os

import pytest
import torch

gnnc = pytest.importorskip("gnnc")
from gnnc import ir  # noqa: E402
from gnnc.nn import _ir  # noqa: E402

DEVICE = torch.device(os.environ.get("GNNC_TEST_DEVICE", "cpu"))

if DEVICE.type == "cuda" and not (torch.cuda.is_available() and gnnc.cuda_available()):
    pytest.skip("GNNC_TEST_DEVICE=cuda without a usable GPU", allow_module_level=True)


def _graph():
    # A duplicate edge (0->1 twice), a self-loop (2->2), an isolated node (5).
    ei = torch.tensor([[0, 0, 2, 3, 2, 4, 1],
                       [1, 1, 2, 1, 0, 3, 4]], device=DEVICE)
    return gnnc.Graph.from_edge_index(ei, num_nodes=6), ei


def _weighted_mean_of_neighbours(dtype="f64", channels=3):
    """out_i = rsqrt(1 + deg_i) * sum_j w_ji x_j, built with every kind of
    step: arguments, constants, dim/empty, a graph op and a generic."""
    f = ir.Builder("wsum", dtype)
    x = f.arg([None, channels])
    w = f.arg([None], edge=True)
    deg = f.degree()
    agg = f.spmm("sum", x, weights=w)
    n = f.dim(x)
    one = f.const(1.0)
    out = f.generic([(0, 1), (0,), (0, 1)], ["parallel", "parallel"], [agg, deg],
                    [f.empty([None, channels], n)],
                    lambda a, d, o: a * ir.rsqrt(d + one))
    return f.finish(out)


def test_built_function_runs_and_differentiates():
    g, ei = _graph()
    fn = gnnc.compile(_weighted_mean_of_neighbours())
    x = torch.randn(6, 3, dtype=torch.float64, device=DEVICE, requires_grad=True)
    w = torch.rand(ei.shape[1], dtype=torch.float64, device=DEVICE, requires_grad=True)
    out = fn(g, x, w)
    src, dst = ei
    agg = torch.zeros(6, 3, dtype=torch.float64, device=DEVICE).index_add(
        0, dst, w[:, None] * x[src])
    deg = torch.bincount(dst, minlength=6).to(torch.float64)
    ref = agg * torch.rsqrt(deg + 1.0)[:, None]
    torch.testing.assert_close(out, ref)
    # Gradients: the compiler's backward against autograd of the reference.
    gx, gw = torch.autograd.grad(out.sum(), (x, w))
    rx, rw = torch.autograd.grad(ref.sum(), (x, w))
    torch.testing.assert_close(gx, rx)
    torch.testing.assert_close(gw, rw)


@pytest.mark.parametrize("dtype,tol", [(torch.bfloat16, 1e-2), (torch.float16, 2e-3)],
                         ids=["bf16", "f16"])
def test_built_half_function_runs_and_differentiates(dtype, tol):
    """A builder of element type bf16 / f16: every argument, constant and
    result has it; values and gradients within the per-op tolerance of
    float64 on the same stored inputs (docs/Semantics.md; three roundings:
    the degree's rsqrt operand, the aggregate, the result)."""
    name = {torch.bfloat16: "bf16", torch.float16: "f16"}[dtype]
    g, ei = _graph()
    fn = gnnc.compile(_weighted_mean_of_neighbours(name))
    assert [a["dtype"] for a in fn.signature["args"][1:]] == [str(dtype)[6:]] * 2
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(6, 3, generator=gen, dtype=torch.float64).to(dtype).to(DEVICE)
    w = torch.rand(ei.shape[1], generator=gen, dtype=torch.float64).to(dtype).to(DEVICE)
    x.requires_grad_()
    w.requires_grad_()
    out = fn(g, x, w)
    assert out.dtype == dtype
    xd, wd = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    src, dst = ei
    agg = torch.zeros(6, 3, dtype=torch.float64, device=DEVICE).index_add(
        0, dst, wd[:, None] * xd[src])
    deg = torch.bincount(dst, minlength=6).to(torch.float64)
    ref = agg * torch.rsqrt(deg + 1.0)[:, None]
    for got, want in [(out, ref)] + list(zip(torch.autograd.grad(out.float().sum(), (x, w)),
                                             torch.autograd.grad(ref.sum(), (xd, wd)))):
        assert got.dtype == dtype
        assert ((got.double() - want).abs() <= 3 * tol * (1 + want.abs())).all()


@pytest.mark.parametrize("low", ["bf16", "f16"])
def test_arguments_stored_in_another_type_are_converted_inside(low):
    """An argument stored in float32 in a half function (`arg(...,
    dtype="f32")`, then `convert`), and a result converted to float32: the
    function takes and returns float32 tensors, and computes what PyTorch
    computes with the casts outside (within the half type's tolerance:
    PyTorch rounds the sum after each addition, gnnc once); the gradient of
    the stored argument is float32, that of the half one half. Arguments
    may follow a conversion of an argument."""
    half = {"bf16": torch.bfloat16, "f16": torch.float16}[low]
    f = ir.Builder("stored_" + low, low)
    x = f.arg([None, 3], name="x")
    w = f.arg([2, 3], dtype="f32", name="w")
    assert repr(w).endswith("tensor<2x3xf32>>") and f.element(w) == "f32"
    wc = f.convert(w)
    assert f.element(wc) == low and f.convert(wc) is not None
    b = f.arg([2], dtype="f32", name="b")  # after a conversion: still an argument
    bc = f.convert(b)
    acc = f.generic([(1,), (0, 1)], ["parallel", "parallel"], [bc],
                    [f.empty([None, 2], f.dim(x))], lambda v, _: v)
    h = f.matmul(x, wc, acc, transpose_rhs=True)
    out = f.convert(f.spmm("sum", h), "f32")
    fn = gnnc.compile(f.finish(out))
    assert [a["dtype"] for a in fn.signature["args"][1:]] == \
        [str(half)[6:], "float32", "float32"]
    assert fn.signature["results"][0]["dtype"] == "float32"
    g, ei = _graph()
    gen = torch.Generator().manual_seed(3)
    xs = torch.randn(6, 3, generator=gen).to(half).to(DEVICE).requires_grad_()
    ws = torch.randn(2, 3, generator=gen).to(DEVICE).requires_grad_()
    bs = torch.randn(2, generator=gen).to(DEVICE).requires_grad_()
    got = fn(g, xs, ws, bs)
    assert got.dtype == torch.float32
    src, dst = ei
    xr, wr, br = (t.detach().clone().requires_grad_() for t in (xs, ws, bs))
    hr = torch.addmm(br.to(half), xr, wr.to(half).t())
    want = torch.zeros(6, 2, dtype=half, device=DEVICE).index_add(0, dst, hr[src]).float()
    tol = {"bf16": dict(rtol=2e-2, atol=2e-2), "f16": dict(rtol=4e-3, atol=4e-3)}[low]
    torch.testing.assert_close(got, want, **tol)
    dy = torch.randn(6, 2, generator=gen).to(DEVICE)
    grads = torch.autograd.grad(got, (xs, ws, bs), dy)
    refs = torch.autograd.grad(want, (xr, wr, br), dy)
    for a, r, dtype in zip(grads, refs, (half, torch.float32, torch.float32)):
        assert a.dtype == dtype
        torch.testing.assert_close(a, r, **tol)


def test_convert_refuses_what_is_no_tensor_or_type():
    f = ir.Builder("f", "bf16")
    x = f.arg([None, 4])
    with pytest.raises(ValueError, match="element type 'f32', 'f64', 'bf16' or 'f16', got 'i8'"):
        f.convert(x, "i8")
    with pytest.raises(ValueError, match="element type 'f32', 'f64', 'bf16' or 'f16', got 'f8'"):
        f.arg([4], dtype="f8")
    with pytest.raises(ValueError, match="convert: expected a tensor, got a index"):
        f.convert(f.dim(x))


def test_same_built_function_is_compiled_once():
    a = gnnc.compile(_weighted_mean_of_neighbours())
    b = gnnc.compile(_weighted_mean_of_neighbours())
    assert a._compiled is b._compiled
    other = gnnc.compile(_weighted_mean_of_neighbours(channels=4))
    assert other._compiled is not a._compiled


def _configs():
    """A spread of the nn layers' configurations."""
    yield "gcn", (8, "f32", True, False)
    yield "gcn", (8, "f64", True, True)
    yield "gcn", (8, "f32", False, True)
    yield "sage", (5, "f32", "max")
    yield "gin", (5, "f64")
    yield "gin_layer", (5, ((3, True, False),), "f32", True)
    yield "gin_layer", (5, ((7, False, True), (4, True, False)), "bf16", False)
    yield "gin_layer", (5, ((3, True, True), (6, True, True)), "f32", True)
    yield "gine_layer", (5, ((3, True, False),), "f32")
    yield "gine_layer", (5, ((8, True, True), (5, True, False)), "f64")
    yield "agnn", (4, "f32", True)
    for masked, dropout, weights, edge in itertools.product([False, True], repeat=4):
        yield "gat_layer", (6, 2, 4, "f32", 0.2, edge, masked, dropout, weights, edge)
        yield "gat_pair", (2, 4, "f32", 0.2, masked, dropout, weights, edge)
        yield "gatv2", (2, 4, "f32", 0.2, masked, dropout, weights, edge)
        yield "gatv2_layer", (6, 2, 4, "f32", 0.2, not edge, edge, masked, masked, dropout,
                              weights, edge)
        yield "transformer", (2, 4, "f64", masked, dropout, weights, edge)
        yield "transformer_layer", (6, 2, 4, "f32", edge, not edge, masked, dropout,
                                    weights, edge)


@pytest.mark.parametrize("template,config", list(_configs()))
def test_layer_functions_print_and_parse_back(template, config):
    module, name = getattr(_ir, template)(*config)
    text = module.text()
    assert f"func.func @{name}(" in text
    assert gnnc._gnnc.Module.parse(text, "<built>").text() == text


def test_body_ops_are_built_in_the_order_written():
    f = ir.Builder("f", "f32")
    x = f.arg([None])
    zero, slope = f.const(0.0), f.const(0.2)
    n = f.dim(x)

    def leaky(v, o):
        neg = v * slope
        pos = v > zero
        return ir.select(pos, v, neg)

    y = f.generic([(0,), (0,)], ["parallel"], [x], [f.empty([None], n)], leaky)
    text = f.finish(y).text()
    body = text[text.index("^bb0"):]
    assert body.index("arith.mulf") < body.index("arith.cmpf ogt") < body.index("arith.select")


def test_scalar_operators():
    f = ir.Builder("f", "f64")
    x = f.arg([None])
    n = f.dim(x)
    y = f.generic([(0,), (0,)], ["parallel"], [x], [f.empty([None], n)],
                  lambda v, o: ir.select(v != 2.0, -(1.0 - v) / 4.0 + ir.exp(v),
                                         ir.maximum(ir.absf(v), ir.tanh(v))))
    fn = gnnc.compile(f.finish(y))
    g, _ = _graph()
    v = torch.tensor([2.0, -1.0, 0.5, 3.0, -2.5, 0.0], dtype=torch.float64, device=DEVICE)
    ref = torch.where(v != 2.0, -(1.0 - v) / 4.0 + torch.exp(v),
                      torch.maximum(v.abs(), torch.tanh(v)))
    torch.testing.assert_close(fn(g, v), ref)


# -- mistakes ------------------------------------------------------------

def test_refuses_unknown_element_type():
    with pytest.raises(ValueError, match="element type 'f32', 'f64', 'bf16' or 'f16', got 'i32'"):
        ir.Builder("f", "i32")


def test_refuses_unknown_reduction_and_kind():
    f = ir.Builder("f", "f32")
    x = f.arg([None, 4])
    with pytest.raises(ValueError, match="spmm: expected the reduction sum, mean, max or min, got 'avg'"):
        f.spmm("avg", x)
    with pytest.raises(ValueError, match="sddmm: expected dot, add, sub or mul, got 'cat'"):
        f.sddmm("cat", x, x)
    with pytest.raises(ValueError, match="gather: expected the end src or dst, got 'both'"):
        f.gather("both", x)


def test_refuses_bad_python_values_with_a_gnnc_message():
    # Out-of-range ints and wrong types reached the native builder, whose
    # binding layer raised "argument(): incompatible function arguments"
    # with C++ signatures; each names the builder's method and the values.
    with pytest.raises(TypeError, match="gnnc.ir: Builder's name is a str, got 3"):
        ir.Builder(3)
    with pytest.raises(TypeError, match="gnnc.ir: Builder's typed is a bool"):
        ir.Builder("f", typed="yes")
    f = ir.Builder("f", "f32", typed=True)
    with pytest.raises(ValueError, match=r"a dimension is a size >= 0 \(below 2\*\*63\)"):
        f.arg([None, 2**63])
    x = f.arg([None, 4])
    e = f.arg([None, 4], edge=True)
    with pytest.raises(ValueError, match=r"relations is a count >= 0 \(below 2\*\*63\), got "):
        f.reduce("sum", e, relations=2**70)
    with pytest.raises(TypeError, match=r"gnnc.ir: dim: an argument of the wrong type or "
                                        r"out of range .*got \(0, 1180591620717411303424\)"):
        f.dim(x, 2**70)
    with pytest.raises(TypeError, match=r"gnnc.ir: spmm: an argument of the wrong type"):
        f.spmm(3, x)
    out = f.spmm("sum", x)  # the builder is still usable after those
    f.finish(out)


def test_refuses_arguments_after_ops():
    f = ir.Builder("f", "f32")
    x = f.arg([None, 4])
    f.spmm("sum", x)
    with pytest.raises(ValueError, match="arguments come before the first op"):
        f.arg([None, 4])


def test_refuses_wrong_operand_kinds():
    f = ir.Builder("f", "f32")
    x = f.arg([None, 4])
    n = f.dim(x)
    with pytest.raises(ValueError, match="spmm: expected a tensor, got a index"):
        f.spmm("sum", n)
    with pytest.raises(ValueError, match="empty: 1 dynamic dimension\\(s\\), 0 size\\(s\\) given"):
        f.empty([None, 4])
    with pytest.raises(ValueError, match=r"a dimension is a size >= 0 \(below 2\*\*63\) or None"):
        f.arg([-3])
    other = ir.Builder("g", "f32")
    y = other.arg([None, 4])
    with pytest.raises(ValueError, match="a value of another function"):
        f.spmm("sum", y)
    with pytest.raises(TypeError, match="expected a gnnc.ir.Value, got Tensor"):
        f.spmm("sum", torch.zeros(2, 4))


def test_refuses_bad_bodies():
    f = ir.Builder("f", "f32")
    x = f.arg([None])
    n = f.dim(x)
    e = f.empty([None], n)
    maps, iters = [(0,), (0,)], ["parallel"]
    with pytest.raises(ValueError, match="select operand #0 must be a comparison"):
        f.generic(maps, iters, [x], [e], lambda v, o: ir.select(v, v, o))
    with pytest.raises(ValueError, match="yields a comparison"):
        f.generic(maps, iters, [x], [e], lambda v, o: v > o)
    with pytest.raises(ValueError, match="a body can use a scalar of the function"):
        f.generic(maps, iters, [x], [e], lambda v, o: v + x)
    with pytest.raises(TypeError, match="no truth value"):
        f.generic(maps, iters, [x], [e], lambda v, o: v if v > o else o)
    with pytest.raises(ValueError, match="2 operands, 1 indexing maps"):
        f.generic([(0,)], iters, [x], [e], lambda v, o: v)
    with pytest.raises(ValueError, match="an indexing map uses dimension 3 of 1"):
        f.generic([(0,), (3,)], iters, [x], [e], lambda v, o: v)
    with pytest.raises(ValueError, match="iterator type parallel or reduction, got 'serial'"):
        f.generic(maps, ["serial"], [x], [e], lambda v, o: v)
    # The builder is still usable after refusals.
    y = f.generic(maps, iters, [x], [e], lambda v, o: v * 2.0)
    assert "arith.mulf" in f.finish(y).text()


def test_verifier_diagnostics_point_at_the_python_line():
    f = ir.Builder("f", "f32")
    x = f.arg([None, 4])
    w = f.arg([None, 3], edge=True)  # 3 heads for features without heads
    line = inspect.currentframe().f_lineno + 1
    out = f.spmm("sum", x, weights=w)
    with pytest.raises(gnnc.CompileError) as err:
        f.finish(out)
    assert f"{os.path.basename(__file__)}:{line}:" in str(err.value)
    assert "error" in str(err.value)


def test_binding_diagnostics_point_at_the_python_line():
    # What gnnc.compile finds when it binds the function's arguments and
    # results was located at loc(unknown) (the function's own location):
    # now at the line that built the argument or the returned value.
    f = ir.Builder("two_dyn", "f32")
    line = inspect.currentframe().f_lineno + 1
    x = f.arg([None, None])
    module = f.finish(f.spmm("sum", x))
    with pytest.raises(gnnc.CompileError,
                       match="only the leading dimension may be dynamic") as err:
        gnnc.compile(module)
    assert f"{os.path.basename(__file__)}:{line}:" in str(err.value)
    b = ir.Builder("mixed", "f64", bipartite=True)
    a = b.arg([None, 2], side="src")
    c = b.arg([None, 2], side="dst")
    n = b.dim(a)
    line = inspect.currentframe().f_lineno + 1
    o = b.generic([(0, 1), (0, 1), (0, 1)], ["parallel", "parallel"], [a, c],
                  [b.empty([None, 2], n)], lambda p, q, r: p + q)
    with pytest.raises(gnnc.CompileError, match="neither the nodes nor the edges") as err:
        gnnc.compile(b.finish(o))
    assert f"{os.path.basename(__file__)}:{line}:" in str(err.value)


def test_finished_builder_is_spent():
    f = ir.Builder("f", "f32")
    x = f.arg([None, 4])
    f.finish(f.spmm("sum", x))
    with pytest.raises(ValueError, match="finished already"):
        f.spmm("sum", x)


def test_constants_are_shared_and_exact():
    f = ir.Builder("f", "f64")
    x = f.arg([None])
    assert f.const(0.1).id == f.const(0.1).id
    assert f.const(0.0).id != f.const(-0.0).id
    n = f.dim(x)
    y = f.generic([(0,), (0,)], ["parallel"], [x], [f.empty([None], n)],
                  lambda v, o: v * 0.1 + math.pi)
    fn = gnnc.compile(f.finish(y))
    g, _ = _graph()
    v = torch.arange(6, dtype=torch.float64, device=DEVICE)
    torch.testing.assert_close(fn(g, v), v * 0.1 + math.pi, rtol=0, atol=0)


def test_dense_ops_projection_heads_and_back():
    # out = collapse(spmm(expand(x W))) + b: a projection into 2 heads of 3.
    f = ir.Builder("proj", "f64")
    x = f.arg([None, 4])
    w = f.arg([4, 6])
    b = f.arg([6])
    n = f.dim(x)
    h = f.matmul(x, w, f.zeros([None, 6], n))
    h3 = f.expand(h, [[0], [1, 2]], [None, 2, 3], n)
    agg = f.collapse(f.spmm("mean", h3), [[0], [1, 2]])
    out = f.generic([(0, 1), (1,), (0, 1)], ["parallel", "parallel"], [agg, b],
                    [f.empty([None, 6], n)], lambda a, c, o: a + c)
    fn = gnnc.compile(f.finish(out))
    g, ei = _graph()
    xs = torch.randn(6, 4, dtype=torch.float64, device=DEVICE)
    ws = torch.randn(4, 6, dtype=torch.float64, device=DEVICE)
    bs = torch.randn(6, dtype=torch.float64, device=DEVICE)
    hs = xs @ ws
    src, dst = ei
    total = torch.zeros(6, 6, dtype=torch.float64, device=DEVICE).index_add(0, dst, hs[src])
    deg = torch.bincount(dst, minlength=6).clamp(min=1).to(torch.float64)
    torch.testing.assert_close(fn(g, xs, ws, bs), total / deg[:, None] + bs)


@pytest.mark.parametrize("transpose", [False, True])
def test_matmul_with_a_linear_weight_as_stored(transpose):
    # out = spmm(x W) with W as given ([4, 6]) or as torch.nn.Linear stores
    # it ([6, 4], transpose_rhs): values and gradients against autograd,
    # gradcheck in float64.
    f = ir.Builder("lin", "f64")
    x = f.arg([None, 4])
    w = f.arg([6, 4] if transpose else [4, 6])
    n = f.dim(x)
    h = f.matmul(x, w, f.zeros([None, 6], n), transpose_rhs=transpose)
    fn = gnnc.compile(f.finish(f.spmm("sum", h)))
    g, ei = _graph()
    xs = torch.randn(6, 4, dtype=torch.float64, device=DEVICE, requires_grad=True)
    ws = torch.randn(*([6, 4] if transpose else [4, 6]), dtype=torch.float64,
                     device=DEVICE, requires_grad=True)
    src, dst = ei

    def ref(x, w):
        h = x @ (w.t() if transpose else w)
        return torch.zeros(6, 6, dtype=torch.float64, device=DEVICE).index_add(0, dst, h[src])
    out = fn(g, xs, ws)
    torch.testing.assert_close(out, ref(xs, ws))
    dy = torch.randn_like(out)
    got = torch.autograd.grad(out, (xs, ws), dy)
    want = torch.autograd.grad(ref(xs, ws), (xs, ws), dy)
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b)
    assert torch.autograd.gradcheck(lambda a, b: fn(g, a, b), (xs, ws))


def test_matmul_refuses_mismatched_shapes():
    f = ir.Builder("f", "f32")
    x = f.arg([None, 4])
    w = f.arg([4, 6])
    n = f.dim(x)
    with pytest.raises(ValueError, match=r"matmul: expected lhs \[m, k\], rhs \[n, k\] "
                                         r"and out \[m, n\], got \[\?, 4\], \[4, 6\] and "
                                         r"\[\?, 4\]"):
        f.matmul(x, w, f.zeros([None, 4], n), transpose_rhs=True)
    with pytest.raises(ValueError, match=r"rhs \[k, n\]"):
        f.matmul(x, w, f.zeros([None, 7], n))


def test_refuses_bad_reshapes():
    f = ir.Builder("f", "f32")
    x = f.arg([None, 8])
    n = f.dim(x)
    with pytest.raises(ValueError, match="expand: groups list the dimensions 0..2 in order"):
        f.expand(x, [[0], [2, 1]], [None, 2, 4], n)
    with pytest.raises(ValueError, match="expand: a size for every dynamic dimension"):
        f.expand(x, [[0], [1, 2]], [None, 2, 4])
    with pytest.raises(ValueError, match="matmul: expected matrices"):
        f.matmul(x, x, f.zeros([None], n))
