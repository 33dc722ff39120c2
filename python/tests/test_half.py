"""bf16 and f16 functions through the gnnc ops (docs/Semantics.md, "Numbers").

Every op kind and every example layer runs on torch.bfloat16 / torch.float16
tensors and is compared with a float64 computation on the same stored
values (the inputs rounded to the half type first), within the documented
per-type tolerance |got - want| <= tol * (1 + |want|): 1e-2 for bf16, 2e-3
for f16; gradients too. On the CPU the ops run the reference evaluator with
results stored at their element type; with GNNC_TEST_DEVICE=cuda the same
tests run the CUDA kernels (f32 arithmetic, half-precision storage).
"""

import os
import pathlib

import pytest
import torch

gnnc = pytest.importorskip("gnnc")

from test_core import (OPS, _graph, example_f64, op_source,  # noqa: E402
                       signature_inputs)

DEVICE = torch.device(os.environ.get("GNNC_TEST_DEVICE", "cpu"))

if DEVICE.type == "cuda" and not (torch.cuda.is_available() and gnnc.cuda_available()):
    pytest.skip("GNNC_TEST_DEVICE=cuda without a usable GPU", allow_module_level=True)

HALVES = {torch.bfloat16: "bf16", torch.float16: "f16"}
# The documented per-op tolerances (docs/Semantics.md), relative to
# 1 + |want|, elementwise.
TOL = {torch.bfloat16: 1e-2, torch.float16: 2e-3}
# Whole layers (docs/Semantics.md): outputs within 4 per-op tolerances of
# the largest output magnitude; gradients within 50 (a sanity bound: stored
# half-precision intermediates, kinks decided on rounded values and weight
# gradients summed from rounded terms move them far more than one op's
# rounding; the per-op gradient tests hold the per-op tolerance).
LAYER, LAYER_GRAD = 4, 50


def assert_close(got, want, dtype, what):
    assert got.dtype == dtype, f"{what}: dtype {got.dtype}"
    err = (got.double() - want).abs()
    bound = TOL[dtype] * (1 + want.abs())
    worst = (err / bound).max().item() if err.numel() else 0.0
    assert worst <= 1.0, f"{what}: worst error {worst:.3g} times the tolerance"


def assert_close_normwise(got, want, dtype, factor, what):
    """max |got - want| <= factor * tol * (1 + max |want|)."""
    assert got.dtype == dtype, f"{what}: dtype {got.dtype}"
    assert torch.isfinite(got).all(), f"{what}: not finite"
    err = (got.double() - want).abs().max().item()
    bound = factor * TOL[dtype] * (1 + want.abs().max().item())
    assert err <= bound, f"{what}: max error {err:.3g} above {bound:.3g}"


def stored(shapes, graph, dtype, seed):
    """Inputs of `dtype` (unit normal values rounded to it)."""
    gen = torch.Generator().manual_seed(seed)
    out = []
    for kind, *rest in shapes:
        rows = graph.num_nodes if kind == "n" else graph.num_edges
        out.append(torch.randn((rows, *rest), generator=gen, dtype=torch.float64)
                   .to(dtype).to(DEVICE))
    return out


def op_case(name, dtype, seed):
    """test_core's op `name` compiled in `dtype`, the test graph, the op's
    float64 formula and its stored inputs."""
    body, args, result, ref, shapes = OPS[name]
    fn = gnnc.compile(op_source(body, args, result, HALVES[dtype]))
    g = _graph(DEVICE)
    return fn, g, ref, stored(shapes, g, dtype, seed=seed)


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("dtype", list(HALVES))
def test_op_matches_float64(name, dtype):
    fn, g, ref, xs = op_case(name, dtype, seed=0)
    got = fn(g, *xs)
    want = ref(g.edge_index, g.num_nodes, *[x.double() for x in xs])
    assert_close(got, want, dtype, name)


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("dtype", list(HALVES))
def test_op_gradients_match_float64(name, dtype):
    fn, g, ref, xs = op_case(name, dtype, seed=1)
    xs = [x.requires_grad_() for x in xs]
    ys = [x.detach().double().requires_grad_() for x in xs]
    out = fn(g, *xs)
    dy = torch.randn(out.shape, generator=torch.Generator().manual_seed(9),
                     dtype=torch.float64).to(dtype).to(DEVICE)
    out.backward(dy)
    ref(g.edge_index, g.num_nodes, *ys).backward(dy.double())
    for i, (x, y) in enumerate(zip(xs, ys)):
        assert_close(x.grad, y.grad, dtype, f"{name} gradient #{i}")


def example(name, t):
    return example_f64(name).replace("f64", t)




@pytest.mark.parametrize("name", ["gcn", "gat", "gatv2", "transformer", "sage_max",
                                  "sage_mean", "gin", "agnn"])
@pytest.mark.parametrize("dtype", list(HALVES))
def test_example_and_gradients_match_float64(name, dtype):
    """A layer in bf16/f16 against the same layer in f64 on the same stored
    inputs: outputs and the gradients of every argument."""
    half = gnnc.compile(example(name, HALVES[dtype]))
    wide = gnnc.compile(example_f64(name))
    g = _graph(DEVICE)
    xs = [x.requires_grad_() for x in signature_inputs(half, g, seed=4, dtype=dtype)]
    ys = [x.detach().double().requires_grad_() for x in xs]
    out, want = half(g, *xs), wide(g, *ys)
    assert_close_normwise(out, want.detach(), dtype, LAYER, name)
    dy = (torch.randn(out.shape, generator=torch.Generator().manual_seed(5),
                      dtype=torch.float64) * 0.5).to(dtype).to(DEVICE)
    out.backward(dy)
    want.backward(dy.double())
    for i, (x, y) in enumerate(zip(xs, ys)):
        assert_close_normwise(x.grad, y.grad, dtype, LAYER_GRAD,
                              f"{name} gradient of argument #{i + 1}")


MIXED = (pathlib.Path(__file__).resolve().parents[2] / "test" / "Integration" /
         "Inputs" / "mixed_bf16_f32.mlir").read_text()


def test_mixed_bf16_features_and_f32_parameters():
    """bf16 rows with an f32 attention parameter, mixed through explicit
    casts: each argument takes its declared dtype, and the gradients too."""
    fn = gnnc.compile(MIXED)
    assert [a["dtype"] for a in fn.signature["args"][1:]] == ["bfloat16", "float32"]
    g = _graph(DEVICE)
    gen = torch.Generator().manual_seed(6)
    x = torch.randn(g.num_nodes, 2, 4, generator=gen, dtype=torch.float64).to(torch.bfloat16)
    att = torch.randn(2, generator=gen, dtype=torch.float64).float()
    x, att = x.to(DEVICE).requires_grad_(), att.to(DEVICE).requires_grad_()
    out = fn(g, x, att)
    assert out.dtype == torch.bfloat16
    out.backward(torch.ones_like(out))
    assert x.grad.dtype == torch.bfloat16 and att.grad.dtype == torch.float32

    def ref(x, att):
        src, dst = g.edge_index
        s = (x[src] * x[dst]).sum(-1) * att
        m = torch.full((g.num_nodes, 2), -torch.inf, dtype=s.dtype, device=s.device)
        m = m.scatter_reduce(0, dst.unsqueeze(1).expand_as(s), s, "amax")
        ex = (s - m[dst]).exp()
        den = torch.zeros_like(m).index_add(0, dst, ex)
        alpha = ex / den[dst]
        return torch.zeros(g.num_nodes, 2, 4, dtype=s.dtype,
                           device=s.device).index_add(0, dst, alpha.unsqueeze(-1) * x[src])

    xd = x.detach().double().requires_grad_()
    ad = att.detach().double().requires_grad_()
    want = ref(xd, ad)
    want.backward(torch.ones_like(want))
    # A chain of four ops: the layer tolerances.
    assert_close_normwise(out, want.detach(), torch.bfloat16, LAYER, "mixed")
    assert_close_normwise(x.grad, xd.grad, torch.bfloat16, LAYER, "mixed dx")
    err = (att.grad.double() - ad.grad).abs().max().item()
    assert err <= LAYER * TOL[torch.bfloat16] * (1 + ad.grad.abs().max().item())

    # A tensor of another dtype than the function declares is refused, by
    # argument.
    with pytest.raises(TypeError, match=r"argument #1 must be torch.bfloat16, got torch.float32"):
        fn(g, x.detach().float(), att.detach())
    with pytest.raises(TypeError, match=r"argument #2 must be torch.float32, got torch.bfloat16"):
        fn(g, x.detach(), att.detach().to(torch.bfloat16))


def test_half_results_are_rounded_once_from_double():
    """A mean over 3 incoming edges: -5/3 exactly in double, rounded to the
    nearest bf16 (-1.6640625) and f16 (-1.6669921875)."""
    g = gnnc.Graph.from_edge_index(
        torch.tensor([[0, 1, 2], [3, 3, 3]], device=DEVICE), num_nodes=4)
    for dtype, want in [(torch.bfloat16, -1.6640625), (torch.float16, -1.6669921875)]:
        t = HALVES[dtype]
        fn = gnnc.compile(
            f"func.func @f(%g: !gnn.graph, %x: tensor<?x1x{t}>) -> tensor<?x1x{t}> {{\n"
            f"  %r = gnn.spmm mean %g, %x : tensor<?x1x{t}> -> tensor<?x1x{t}>\n"
            f"  return %r : tensor<?x1x{t}>\n}}\n")
        x = torch.tensor([[-1.0], [-2.0], [-2.0], [0.0]], dtype=dtype, device=DEVICE)
        assert fn(g, x)[3, 0].item() == want
