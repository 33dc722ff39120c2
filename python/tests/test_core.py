"""The gnnc package's core: gnnc.compile, gnnc.Graph and the gnnc::run op.

Runs on the CPU (reference evaluator); with GNNC_TEST_DEVICE=cuda the same
tests run on CUDA tensors (float64 gradcheck included: f64 kernels).
"""

import os
import pathlib

import pytest
import torch

gnnc = pytest.importorskip("gnnc")
from gnnc import _core  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEVICE = torch.device(os.environ.get("GNNC_TEST_DEVICE", "cpu"))

if DEVICE.type == "cuda" and not (torch.cuda.is_available() and gnnc.cuda_available()):
    pytest.skip("GNNC_TEST_DEVICE=cuda without a usable GPU", allow_module_level=True)


def op_source(body: str, args: str, result: str, t: str = "f64") -> str:
    """A function @f(%g, args) -> result around `body` (which defines %r)."""
    return (f"func.func @f(%g: !gnn.graph, {args}) -> {result} {{\n{body}\n"
            f"  return %r : {result}\n}}\n").replace("T", t)


# Each op kind: (IR body, arguments, result, torch reference, input shapes).
N, E = 6, 0  # E set from the graph


def _graph(device=DEVICE):
    # An isolated node (5), a self-loop (2->2), a duplicate edge (0->1 twice),
    # a node with three in-edges (1).
    ei = torch.tensor([[0, 0, 2, 3, 2, 4, 1],
                       [1, 1, 2, 1, 0, 3, 4]], device=device)
    return gnnc.Graph.from_edge_index(ei, num_nodes=6)


def scatter(src, index, n, reduce):
    out_shape = (n,) + tuple(src.shape[1:])
    out = torch.zeros(out_shape, dtype=src.dtype, device=src.device)
    if reduce == "sum":
        return out.index_add(0, index, src)
    idx = index.view(-1, *([1] * (src.dim() - 1))).expand_as(src)
    return out.scatter_reduce(0, idx, src, reduce=reduce, include_self=False)


OPS = {
    "gather_src": (
        "  %r = gnn.gather src %g, %x : tensor<?x3xT> -> tensor<?x3xT>",
        "%x: tensor<?x3xT>", "tensor<?x3xT>",
        lambda ei, n, x: x[ei[0]], [("n", 3)]),
    "sddmm_dot": (
        "  %r = gnn.sddmm dot %g, %a, %b : tensor<?x2x3xT>, tensor<?x2x3xT> -> tensor<?x2xT>",
        "%a: tensor<?x2x3xT>, %b: tensor<?x2x3xT>", "tensor<?x2xT>",
        lambda ei, n, a, b: (a[ei[0]] * b[ei[1]]).sum(-1), [("n", 2, 3), ("n", 2, 3)]),
    # A dot product long enough for a team of lanes with vector loads (16
    # lanes of float4, or 8 lanes of 8 halves).
    "sddmm_dot_wide": (
        "  %r = gnn.sddmm dot %g, %a, %b : tensor<?x2x64xT>, tensor<?x2x64xT> -> tensor<?x2xT>",
        "%a: tensor<?x2x64xT>, %b: tensor<?x2x64xT>", "tensor<?x2xT>",
        lambda ei, n, a, b: (a[ei[0]] * b[ei[1]]).sum(-1), [("n", 2, 64), ("n", 2, 64)]),
    "sddmm_add": (
        "  %r = gnn.sddmm add %g, %a, %b : tensor<?x2xT>, tensor<?x2xT> -> tensor<?x2xT>",
        "%a: tensor<?x2xT>, %b: tensor<?x2xT>", "tensor<?x2xT>",
        lambda ei, n, a, b: a[ei[0]] + b[ei[1]], [("n", 2), ("n", 2)]),
    "edge_softmax": (
        "  %r = gnn.edge_softmax %g, %s : tensor<?x2xT>",
        "%s: tensor<?x2xT> {gnn.domain = \"edge\"}", "tensor<?x2xT>",
        lambda ei, n, s: softmax(s, ei[1], n), [("e", 2)]),
    "spmm_sum": (
        "  %r = gnn.spmm sum %g, %x : tensor<?x3xT> -> tensor<?x3xT>",
        "%x: tensor<?x3xT>", "tensor<?x3xT>",
        lambda ei, n, x: scatter(x[ei[0]], ei[1], n, "sum"), [("n", 3)]),
    "spmm_mean": (
        "  %r = gnn.spmm mean %g, %x : tensor<?x3xT> -> tensor<?x3xT>",
        "%x: tensor<?x3xT>", "tensor<?x3xT>",
        lambda ei, n, x: scatter(x[ei[0]], ei[1], n, "sum")
        / torch.bincount(ei[1], minlength=n).clamp(min=1).unsqueeze(1).to(x.dtype),
        [("n", 3)]),
    "spmm_max_weighted": (
        "  %r = gnn.spmm max %g, %x weights(%w : tensor<?xT>) : tensor<?x3xT> -> tensor<?x3xT>",
        "%x: tensor<?x3xT>, %w: tensor<?xT> {gnn.domain = \"edge\"}", "tensor<?x3xT>",
        lambda ei, n, x, w: scatter(w.unsqueeze(1) * x[ei[0]], ei[1], n, "amax"),
        [("n", 3), ("e",)]),
    "spmm_sum_heads": (
        "  %r = gnn.spmm sum %g, %x weights(%w : tensor<?x2xT>) : tensor<?x2x3xT> -> tensor<?x2x3xT>",
        "%x: tensor<?x2x3xT>, %w: tensor<?x2xT> {gnn.domain = \"edge\"}", "tensor<?x2x3xT>",
        lambda ei, n, x, w: scatter(w.unsqueeze(-1) * x[ei[0]], ei[1], n, "sum"),
        [("n", 2, 3), ("e", 2)]),
    "reduce_sum": (
        "  %r = gnn.reduce sum %g, %v : tensor<?x2xT> -> tensor<?x2xT>",
        "%v: tensor<?x2xT> {gnn.domain = \"edge\"}", "tensor<?x2xT>",
        lambda ei, n, v: scatter(v, ei[1], n, "sum"), [("e", 2)]),
}


def softmax(s, index, n):
    m = scatter(s, index, n, "amax")[index]
    ex = (s - m).exp()
    return ex / scatter(ex, index, n, "sum")[index]


def make_inputs(shapes, graph, dtype, seed=0):
    gen = torch.Generator().manual_seed(seed)
    out = []
    for kind, *rest in shapes:
        rows = graph.num_nodes if kind == "n" else graph.num_edges
        # Distinct values: max aggregations have no ties to split.
        t = torch.randn((rows, *rest), generator=gen, dtype=dtype)
        out.append(t.to(DEVICE))
    return out


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_op_matches_torch(name, dtype):
    body, args, result, ref, shapes = OPS[name]
    t = "f32" if dtype == torch.float32 else "f64"
    fn = gnnc.compile(op_source(body, args, result, t))
    g = _graph()
    xs = make_inputs(shapes, g, dtype)
    got = fn(g, *xs)
    want = ref(g.edge_index, g.num_nodes, *xs)
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    torch.testing.assert_close(got, want, rtol=tol, atol=tol)


_FRESH_THREADS = """
import threading, torch, gnnc
src = {src!r}
fn = gnnc.compile(src)
ei = torch.tensor([[0, 0, 2, 3, 2, 4, 1], [1, 1, 2, 1, 0, 3, 4]], device="cuda")
g = gnnc.Graph.from_edge_index(ei, num_nodes=6)
s = torch.randn(7, 2, dtype=torch.float64, device="cuda", requires_grad=True)
dy = torch.randn(7, 2, dtype=torch.float64, device="cuda")
# The process's first backward: autograd's device thread has made no CUDA
# call before gnnc's.
(gs,) = torch.autograd.grad(fn(g, s), s, dy)
out = {{}}
def run():
    out["y"] = fn(g, s.detach())
    (out["g"],) = torch.autograd.grad(fn(g, s), s, dy)
t = threading.Thread(target=run)
t.start(); t.join()
torch.testing.assert_close(out["g"], gs)
print("ok")
"""


@pytest.mark.skipif(DEVICE.type != "cuda", reason="CUDA contexts per thread")
def test_ops_run_on_threads_that_made_no_cuda_call_before():
    """The driver-API launches make the primary context current on threads
    whose first CUDA call is gnnc's (CUDA_ERROR_INVALID_CONTEXT before)."""
    import subprocess
    import sys
    body, args, result, _, _ = OPS["edge_softmax"]
    code = _FRESH_THREADS.format(src=op_source(body, args, result))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0 and p.stdout.strip().endswith("ok"), p.stderr[-3000:]


@pytest.mark.skipif(DEVICE.type != "cuda", reason="CUDA streams")
def test_work_on_a_side_stream_outlives_the_graph_it_reads():
    """A call queued on a non-default stream (held back by a sleep) reads a
    graph whose edge_index the caller drops right after; graphs of the same
    sizes built meanwhile on the default stream must not get its memory
    (graph arrays, gnnc's snapshot copy, the dropped tensor) before the
    call has run (rt::Graph::usedOn, _core._keep_for_stream). On the H200
    this was written on, the result was right without those too: the race
    did not show (bench/probes/streams/side_stream.py looks closer)."""
    body, args, result, ref, _ = OPS["spmm_sum"]
    fn = gnnc.compile(op_source(body, args, result, "f32"))
    n, e = 4096, 65536
    gen = torch.Generator().manual_seed(5)
    ei_cpu = torch.randint(0, n, (2, e), generator=gen)
    x = torch.randn(n, 3, generator=gen).to(DEVICE)
    ei = ei_cpu.to(DEVICE)
    fn(ei, x, num_nodes=n)  # built and cached on the default stream
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(400_000_000)  # some 200 ms
        y = fn(ei, x, num_nodes=n)
    del ei  # its graph retires, then leaves the cache below
    for _ in range(6):
        other = torch.randint(0, n, (2, e), generator=gen).to(DEVICE)
        fn(other, x, num_nodes=n)
    side.synchronize()
    torch.cuda.synchronize()
    torch.testing.assert_close(y, ref(ei_cpu.to(DEVICE), n, x))


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_gradcheck(name):
    body, args, result, ref, shapes = OPS[name]
    fn = gnnc.compile(op_source(body, args, result))
    g = _graph()
    xs = [x.requires_grad_() for x in make_inputs(shapes, g, torch.float64, seed=1)]
    assert torch.autograd.gradcheck(lambda *a: fn(g, *a), xs, eps=1e-6, atol=1e-7,
                                    rtol=1e-6)


def _gradients_match_reference(name, seed):
    """The op's gradients through autograd against its PyTorch reference's;
    returns the op's output."""
    body, args, result, ref, shapes = OPS[name]
    fn = gnnc.compile(op_source(body, args, result))
    g = _graph()
    xs = [x.requires_grad_() for x in make_inputs(shapes, g, torch.float64, seed=seed)]
    ys = [x.detach().clone().requires_grad_() for x in xs]
    out = fn(g, *xs)
    dy = torch.randn_like(out)
    (out * dy).sum().backward()
    (ref(g.edge_index, g.num_nodes, *ys) * dy).sum().backward()
    for a, b in zip(xs, ys):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-10, atol=1e-10)
    return out


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_gradient_matches_torch_autograd(name):
    _gradients_match_reference(name, seed=2)


@pytest.mark.parametrize("direct", [False, True])
def test_the_step_through_either_apply(monkeypatch, direct):
    # _apply_step calls the C++ autograd apply directly where PyTorch's
    # Function.apply is Python (before 2.15); forced on (and off) here, the
    # gradients are autograd's either way.
    monkeypatch.setattr(_core, "_DIRECT_APPLY", direct)
    out = _gradients_match_reference(sorted(OPS)[0], seed=3)
    assert out.grad_fn is not None and "_Step" in type(out.grad_fn).__name__


def test_opcheck():
    body, args, result, _, shapes = OPS["spmm_sum_heads"]
    key_fn = gnnc.compile(op_source(body, args, result))
    g = _graph()
    xs = [x.requires_grad_() for x in make_inputs(shapes, g, torch.float64)]
    key_fn(g, *xs)  # registers the training target
    compiled = key_fn._compiled
    fwd = compiled.target(key_fn._forward, key_fn.function)
    plain = compiled.target(key_fn.function)
    handle = _core._graphs.get(g.edge_index, g.num_nodes).handle
    inputs = [x.detach() for x in xs]
    # The C++ ops (CPU and Meta kernels) against PyTorch's checks: schema,
    # fake tensors, no aliasing. Autograd is gnnc's Function, not the op's.
    checks = ("test_schema", "test_faketensor")
    torch.library.opcheck(torch.ops.gnnc.call.default,
                          (plain, g.edge_index, g.num_nodes, -1, handle, inputs),
                          test_utils=checks)
    torch.library.opcheck(torch.ops.gnnc.call.default,
                          (fwd, g.edge_index, g.num_nodes, -1, handle, inputs),
                          test_utils=checks)
    # The backward op on what the forward left (its outputs, residuals
    # included) and output gradients.
    outputs = torch.ops.gnnc.call(fwd, g.edge_index, g.num_nodes, -1, handle, inputs)
    dys = [torch.randn_like(outputs[0])]
    torch.library.opcheck(torch.ops.gnnc.call_backward.default,
                          (fwd, g.edge_index, g.num_nodes, -1, handle, inputs,
                           list(outputs), dys), test_utils=checks)
    grads = torch.ops.gnnc.call_backward(fwd, g.edge_index, g.num_nodes, -1, handle,
                                         inputs, list(outputs), dys)
    assert [t.shape for t in grads] == [x.shape for x in xs]
    # The kernels read what they are given as it is: anything else is
    # refused (a tagged RuntimeError; gnnc's Python API raises the tag).
    with pytest.raises(RuntimeError, match=r"\[ValueError\] .*output gradient #1 "
                                           r"must have shape"):
        torch.ops.gnnc.call_backward(fwd, g.edge_index, g.num_nodes, -1, handle, inputs,
                                     list(outputs), [dys[0][:-1]])
    with pytest.raises(RuntimeError, match=r"\[TypeError\] .*expected 1 tensors"):
        torch.ops.gnnc.call_backward(fwd, g.edge_index, g.num_nodes, -1, handle, inputs,
                                     list(outputs), [])
    with pytest.raises(RuntimeError, match=r"\[ValueError\] .*not the forward of a "
                                           r"training step"):
        torch.ops.gnnc.call_backward(plain, g.edge_index, g.num_nodes, -1, handle,
                                     inputs, list(outputs), dys)
    with pytest.raises(RuntimeError, match=r"\[ValueError\] .*no compiled function"):
        torch.ops.gnnc.call(10**9, g.edge_index, g.num_nodes, -1, handle, inputs)
    with pytest.raises(RuntimeError, match=r"\[ValueError\] .*names no live graph"):
        torch.ops.gnnc.call(plain, g.edge_index, g.num_nodes, -1, 10**12, inputs)
    other_index = torch.tensor([[0], [1]], device=g.edge_index.device)
    other = _core._graphs.get(other_index, 2)
    with pytest.raises(RuntimeError, match=r"\[ValueError\] .*names a graph of 2 "
                                           r"nodes and 1 edges"):
        torch.ops.gnnc.call(plain, g.edge_index, g.num_nodes, -1, other.handle,
                            inputs)


def test_double_backward_is_refused():
    body, args, result, _, shapes = OPS["spmm_sum_heads"]
    fn = gnnc.compile(op_source(body, args, result))
    g = _graph()
    xs = [x.requires_grad_() for x in make_inputs(shapes, g, torch.float64)]
    out = fn(g, *xs)
    with pytest.raises(RuntimeError, match="double backward"):
        torch.autograd.grad(out.sum(), xs, create_graph=True)
    # The plain backward still works on the same graph.
    grads = torch.autograd.grad(fn(g, *xs).sum(), xs)
    assert [t.shape for t in grads] == [x.shape for x in xs]


def example_f64(name):
    return (ROOT / "examples" / f"{name}.mlir").read_text().replace("f32", "f64")


def signature_inputs(fn, g, seed, dtype=torch.float64):
    """One seeded tensor per argument of `fn` after the graph (node and edge
    rows from `g`), float64 values times 0.5 stored in `dtype`, on DEVICE."""
    gen = torch.Generator().manual_seed(seed)
    xs = []
    for a in fn.signature["args"][1:]:
        shape = list(a["shape"])
        if a["kind"] == "node":
            shape[0] = g.num_nodes
        elif a["kind"] == "edge":
            shape[0] = g.num_edges
        xs.append((torch.randn(shape, generator=gen, dtype=torch.float64) * 0.5)
                  .to(dtype).to(DEVICE))
    return xs


@pytest.mark.parametrize("name", ["gcn", "gat", "gatv2", "transformer", "sage_max",
                                  "sage_mean", "gin", "agnn"])
def test_example_gradcheck(name):
    fn = gnnc.compile(example_f64(name))
    g = _graph()
    xs = [x.requires_grad_() for x in signature_inputs(fn, g, seed=3)]
    # SAGE max's input gradient adds into each winning neighbour's row
    # atomically (gnn.extremum_grad): two backward runs may round a sum of
    # three or more terms differently, so it gets a reentrancy tolerance.
    nondet = 1e-12 if name == "sage_max" else 0.0
    assert torch.autograd.gradcheck(lambda *a: fn(g, *a), xs, eps=1e-6, atol=1e-6,
                                    rtol=1e-5, fast_mode=True, nondet_tol=nondet)


def test_torch_compile_fullgraph():
    body, args, result, ref, shapes = OPS["spmm_sum_heads"]
    fn = gnnc.compile(op_source(body, args, result, "f32"))
    g = _graph()
    x, w = make_inputs(shapes, g, torch.float32)

    def layer(x, w, edge_index):
        return torch.relu(fn(edge_index, x * 2, w, num_nodes=6)) + 1

    eager = layer(x, w, g.edge_index)
    compiled = torch.compile(layer, fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(compiled(x, w, g.edge_index), eager)
    x.requires_grad_()
    compiled(x, w, g.edge_index).sum().backward()
    assert x.grad is not None and x.grad.shape == x.shape
    explain = torch._dynamo.explain(layer)(x, w, g.edge_index)
    assert explain.graph_break_count == 0


def test_op_handles_name_the_function_in_every_process():
    """The ops' function handle is a constant of every graph torch.compile
    caches on disk: it is derived from the function's IR, not from the order
    in which a process registered its functions (with a counter, a process
    that registered other functions first got another function's cached
    code: its outputs' layouts, 'mismatch in length of strides and shape')."""
    import subprocess
    import sys
    script = (
        "import sys, gnnc, test_core as T\n"
        "names = sys.argv[1:]\n"
        "for name in names:\n"
        "    body, args, result, ref, shapes = T.OPS[name]\n"
        "    fn = gnnc.compile(T.op_source(body, args, result, 'f32'))\n"
        "print(fn._target, fn._step)\n")
    here = pathlib.Path(__file__).resolve().parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(here)] + [str(pathlib.Path(p).resolve())  # the child runs in `here`
                       for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))

    def handles(*names):
        out = subprocess.run([sys.executable, "-c", script, *names], env=env, cwd=here,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout.split()

    last = handles("spmm_sum_heads")
    assert handles("spmm_mean", "spmm_sum_heads") == last
    assert handles("spmm_mean") != last


def test_op_handles_name_the_signatures_the_fake_kernels_read():
    """The same source compiled by a gnnc that keeps other residuals (or
    gives a function other results) gets other handles: torch.compile's
    on-disk cache keys its graphs on the handle, and a graph cached for the
    old residuals fails its size check on the new residuals' byte tensor
    ('expected size 1536==2560', a CI run of session 83 after the compiler
    changed GINE's residuals)."""
    from gnnc._core import _Compiled
    body, args, result, ref, shapes = OPS["spmm_mean"]
    src = op_source(body, args, result, "f32")

    def handles():
        c = _Compiled("same-key", _core._C.Module.parse(src, "test"))
        c.prepare("f")
        return c.target("f"), c.target(c.grad_info["f"]["forward"], "f")

    plain, step = handles()
    # What another compiler would have kept: one more residual. (@f itself
    # is unchanged, its handle the first's: registered once per process,
    # so only the training forward's is asked of this one.)
    c = _Compiled("same-key", _core._C.Module.parse(src, "test"))
    c.prepare("f")
    fwd = c.grad_info["f"]["forward"]
    c.grad_info["f"] = dict(c.grad_info["f"], residuals=[{"kind": "result", "index": 1}])
    sig = dict(c.signature(fwd))
    sig["results"] = sig["results"] + [{"dtype": "float32", "kind": "edge",
                                         "shape": [-1, 3]}]
    c.signatures[fwd] = sig
    assert c.target(fwd, "f") not in (plain, step)


def test_graph_built_inside_compiled_code():
    """gnnc.Graph inside torch.compile'd code: with graph breaks allowed it
    runs eagerly (same result); under fullgraph=True it is refused, naming
    the way out (dynamo's own error named neither gnnc nor a fix; dynamo
    before 2.15 drops the message from its report)."""
    body, args, result, ref, shapes = OPS["spmm_sum"]
    fn = gnnc.compile(op_source(body, args, result, "f32"))
    g = _graph()
    x = make_inputs(shapes, g, torch.float32)[0]

    def f(x, ei):
        return fn(gnnc.Graph(ei, num_nodes=x.size(0)), x)

    want = f(x, g.edge_index)
    torch._dynamo.reset()
    torch.testing.assert_close(torch.compile(f)(x, g.edge_index), want)
    torch._dynamo.reset()
    with pytest.raises(Exception) as info:
        torch.compile(f, fullgraph=True)(x, g.edge_index)
    chain, e = [], info.value
    while e is not None:
        chain.append(str(e))
        e = e.__cause__
    if tuple(int(v) for v in torch.__version__.split(".")[:2]) >= (2, 15):
        assert any("gnnc.Graph cannot be built inside torch.compile" in m for m in chain), chain


def test_empty_graph_and_isolated_nodes():
    body, args, result, ref, shapes = OPS["spmm_mean"]
    fn = gnnc.compile(op_source(body, args, result, "f32"))
    ei = torch.empty((2, 0), dtype=torch.int64, device=DEVICE)
    g = gnnc.Graph.from_edge_index(ei, num_nodes=4)
    x = torch.randn(4, 3, device=DEVICE)
    assert torch.equal(fn(g, x), torch.zeros(4, 3, device=DEVICE))
    g0 = gnnc.Graph.from_edge_index(ei)
    assert g0.num_nodes == 0
    assert fn(g0, torch.empty(0, 3, device=DEVICE)).shape == (0, 3)


def test_graph_cache_follows_in_place_changes():
    body, args, result, ref, shapes = OPS["spmm_sum"]
    fn = gnnc.compile(op_source(body, args, result, "f32"))
    ei = torch.tensor([[0, 1], [1, 2]], device=DEVICE)
    x = torch.arange(9, dtype=torch.float32, device=DEVICE).view(3, 3)
    a = fn(ei, x, num_nodes=3)
    ei[0, 0] = 2  # in place: the cached structures must be rebuilt
    b = fn(ei, x, num_nodes=3)
    torch.testing.assert_close(b, scatter(x[ei[0]], ei[1], 3, "sum"))
    assert not torch.equal(a, b)


def test_a_new_tensor_with_the_same_indices_reuses_the_graph(monkeypatch):
    """A layer that builds its edge_index in forward (add_self_loops) hands
    over a new tensor each call: a graph of the same indices, live or whose
    tensor died, is reused after one comparison; other indices, or a change
    of the new tensor, are built and checked anew."""
    body, args, result, ref, shapes = OPS["spmm_sum"]
    fn = gnnc.compile(op_source(body, args, result, "f32"))
    builds = []
    real = _core._GraphCache._build
    monkeypatch.setattr(_core._GraphCache, "_build",
                        lambda self, *a: (builds.append(1), real(self, *a))[1])
    base = torch.tensor([[0, 1, 3], [1, 2, 2]], device=DEVICE)
    x = torch.arange(12, dtype=torch.float32, device=DEVICE).view(4, 3)
    want = scatter(x[base[0]], base[1], 4, "sum")
    for _ in range(3):  # each tensor dies after its call
        torch.testing.assert_close(fn(base.clone(), x, num_nodes=4), want)
    live = base.clone()
    torch.testing.assert_close(fn(live, x, num_nodes=4), want)
    torch.testing.assert_close(fn(live.clone(), x, num_nodes=4), want)  # a live twin
    assert len(builds) == 1
    other = base.clone()
    other[0, 0] = 2
    torch.testing.assert_close(fn(other, x, num_nodes=4), scatter(x[other[0]], other[1], 4, "sum"))
    torch.testing.assert_close(fn(base.clone(), x, num_nodes=4), want)  # still found
    assert len(builds) == 2
    # The reused graph follows its own tensor's changes.
    twin = base.clone()
    fn(twin, x, num_nodes=4)
    twin[0, 2] = 0
    torch.testing.assert_close(fn(twin, x, num_nodes=4), scatter(x[twin[0]], twin[1], 4, "sum"))
    assert len(builds) == 3
    # Another node count is another graph.
    assert fn(base.clone(), torch.zeros(5, 3, device=DEVICE), num_nodes=5).shape == (5, 3)
    assert len(builds) == 4


# Bad input: a clear exception, never a crash or a wrong answer.

def test_bad_ir_is_located():
    with pytest.raises(gnnc.CompileError, match=r"<string>:2:\d+: error"):
        gnnc.compile("func.func @f(%g: !gnn.graph) {\n  %r = gnn.nope\n}\n")


def _run_reproducer(message: str):
    """Runs the command on the last line of a compile error (its tool from
    the build's bin folder or PATH); returns (its exit status, its stderr)."""
    import shlex
    import shutil
    import subprocess
    last = str(message).splitlines()[-1]
    assert last.startswith("reproduce with: "), message
    argv = shlex.split(last[len("reproduce with: "):])
    tool = shutil.which(argv[0]) or str(ROOT / "build" / "bin" / argv[0])
    if not os.path.exists(tool):
        pytest.skip(f"{argv[0]} is not on PATH nor in build/bin")
    out = subprocess.run([tool, *argv[1:]], capture_output=True, text=True, timeout=120)
    return out.returncode, out.stderr


@pytest.mark.parametrize("case", ["syntax", "verifier", "unknown op"])
def test_compile_errors_end_with_a_reproducer(case, tmp_path, _reproducers_in_pytest_temp):
    """STYLE.md, "Errors": a compile error prints the gnn-opt command that
    reproduces it, on the file the IR came from, or on a copy of IR given
    as text (the error was located in <string>, with no way to rerun it)."""
    bad = {"syntax": "  return %x tensor<?x4xf32>",
           "verifier": "  %r = gnn.spmm sum %g, %x : tensor<?x4xf32> -> tensor<?x8xf32>",
           "unknown op": "  %r = gnn.spmv sum %g, %x : tensor<?x4xf32> -> tensor<?x4xf32>"}
    src = ("func.func @f(%g: !gnn.graph, %x: tensor<?x4xf32>) -> tensor<?x4xf32> {\n"
           f"{bad[case]}\n  return %x : tensor<?x4xf32>\n}}\n")
    with pytest.raises(gnnc.CompileError) as text_error:
        gnnc.compile(src)
    first = str(text_error.value).splitlines()[0]
    assert first.startswith("<string>:2:")
    # The suite's copies go to pytest's temporary folders (conftest.py).
    written = pathlib.Path(str(text_error.value).split()[-1])
    assert written.parent == pathlib.Path(_reproducers_in_pytest_temp), written
    status, err = _run_reproducer(text_error.value)
    # The tool reports the same diagnostic at the same line and column.
    assert status != 0 and first[len("<string>"):] in err, err
    path = tmp_path / "bad.mlir"
    path.write_text(src)
    with pytest.raises(gnnc.CompileError) as file_error:
        gnnc.compile(path=path)
    assert str(file_error.value).splitlines()[-1].endswith(" " + str(path))
    assert _run_reproducer(file_error.value)[0] != 0


def test_reproducer_ir_is_written_to_a_gnnc_folder_of_the_temp_dir(monkeypatch, tmp_path):
    """IR given as text that does not compile is written for the reproducer
    command to gnnc-reproducers/ in the temporary folder, not loose in it
    (a test run left a dozen gnnc-*.mlir files in /tmp)."""
    import tempfile
    monkeypatch.setattr(_core, "_REPRODUCER_DIR", None)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    src = ("func.func @f(%g: !gnn.graph, %x: tensor<?x4xf32>) -> tensor<?x4xf32> {\n"
           "  %r = gnn.nope\n  return %x : tensor<?x4xf32>\n}\n")
    with pytest.raises(gnnc.CompileError) as error:
        gnnc.compile(src)
    written = pathlib.Path(str(error.value).split()[-1])
    assert written.parent == tmp_path / "gnnc-reproducers", written
    assert written.name.startswith("gnnc-") and written.suffix == ".mlir"
    assert written.read_text() == src
    assert [p.name for p in tmp_path.iterdir()] == ["gnnc-reproducers"]


def test_a_gradient_error_ends_with_a_reproducer():
    """A function without a derivative rule still runs; asking for its
    gradient raises the located diagnostic and the gnn-run --grad command
    that reproduces it."""
    src = op_source("  %c0 = arith.constant 0 : index\n"
                    "  %n = tensor.dim %x, %c0 : tensor<?x3xT>\n"
                    "  %e = tensor.empty(%n) : tensor<?x3xT>\n"
                    "  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,"
                    " affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [\"parallel\","
                    " \"parallel\"]} ins(%x : tensor<?x3xT>) outs(%e : tensor<?x3xT>) {\n"
                    "  ^bb0(%a: T, %o: T):\n    %t = math.atan %a : T\n"
                    "    linalg.yield %t : T\n  } -> tensor<?x3xT>",
                    "%x: tensor<?x3xT>", "tensor<?x3xT>")
    fn = gnnc.compile(src)
    g = _graph()
    x = torch.rand(6, 3, dtype=torch.float64, device=DEVICE, requires_grad=True)
    with pytest.raises(gnnc.CompileError, match="no derivative rule") as info:
        fn(g, x)
    status, err = _run_reproducer(info.value)
    assert status != 0 and "'math.atan' op has no derivative rule" in err, err


def test_missing_function():
    src = op_source(*OPS["spmm_sum"][:3])
    with pytest.raises(gnnc.CompileError, match="no function 'g'"):
        gnnc.compile(src, function="g")


def test_bad_inputs():
    body, args, result, ref, shapes = OPS["spmm_sum"]
    fn = gnnc.compile(op_source(body, args, result, "f32"))
    g = _graph()
    x = torch.randn(6, 3, device=DEVICE)
    with pytest.raises(ValueError, match=r"shape \[6, 3\]"):
        fn(g, torch.randn(5, 3, device=DEVICE))
    with pytest.raises(TypeError, match="torch.float32"):
        fn(g, x.double())
    with pytest.raises(ValueError, match="contiguous"):
        fn(g, torch.randn(3, 6, device=DEVICE).t())
    # A sparse tensor: named as such, not as a layout to make contiguous.
    for sparse in (x.to_sparse(), x.to_sparse_csr()):
        with pytest.raises(TypeError, match=r"argument #1 must be a dense \(strided\) "
                                            r"tensor, got a torch.sparse_(coo|csr)"):
            fn(g, sparse)
    with pytest.raises(TypeError, match="1 tensors"):
        fn(g, x, x)
    with pytest.raises(ValueError, match="outside"):
        fn(torch.tensor([[0, 7], [1, 2]], device=DEVICE), x, num_nodes=6)
    with pytest.raises(ValueError, match="outside"):
        fn(torch.tensor([[0, -1], [1, 2]], device=DEVICE), x, num_nodes=6)
    with pytest.raises(ValueError, match=r"\[2, E\]"):
        gnnc.Graph.from_edge_index(torch.zeros(3, 4, dtype=torch.int64))
    with pytest.raises(TypeError, match="int64"):
        gnnc.Graph.from_edge_index(torch.zeros(2, 4))
    with pytest.raises(TypeError, match="num_nodes"):
        fn(g.edge_index, x)


def test_unknown_domain_is_refused():
    src = ("func.func @f(%g: !gnn.graph, %x: tensor<?x3xf32>) -> tensor<?x3xf32> {\n"
           "  return %x : tensor<?x3xf32>\n}\n")
    fn = gnnc.compile(src)  # a node tensor: fine
    assert fn.signature["results"][0]["kind"] == "node"


def test_a_function_pickles_and_deep_copies():
    """A model that keeps a gnnc.Function (copy.deepcopy for a target
    network, torch.save): a deep copy shares the compiled function, a pickle
    compiles its IR again (both raised "cannot pickle 'Module' object")."""
    import copy
    import pickle
    from gnnc import ir
    body, args, result, ref, shapes = OPS["spmm_sum_heads"]
    text_fn = gnnc.compile(op_source(body, args, result))
    f = ir.Builder("built_for_pickle", "f64")
    x = f.arg([None, 3])
    built_fn = gnnc.compile(f.finish(f.spmm("mean", x)))
    g = _graph()
    for fn in (text_fn, built_fn):
        assert copy.deepcopy(fn) is fn
        again = pickle.loads(pickle.dumps(fn))
        assert again.function == fn.function and again.signature == fn.signature
        xs = [t.requires_grad_() for t in signature_inputs(fn, g, seed=5)]
        want = fn(g, *xs)
        got = again(g, *xs)
        torch.testing.assert_close(got, want, rtol=0, atol=0)
        dy = torch.randn_like(want)
        for a, b in zip(torch.autograd.grad(got, xs, dy), torch.autograd.grad(want, xs, dy)):
            torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_torch_func_transforms_are_refused_clearly():
    """torch.func's transforms and forward-mode AD are not supported: a
    RuntimeError naming gnnc and the way out (PyTorch's own said "Cannot
    access data pointer of Tensor that doesn't have storage"; a dual
    tensor's tangent was silently dropped), and a layer refused under a
    transform still runs afterwards (its graph cache had kept a tensor
    without storage, failing every later call on that edge_index)."""
    import torch.autograd.forward_ad as fwAD
    import gnnc.nn
    body, args, result, ref, shapes = OPS["spmm_sum_heads"]
    fn = gnnc.compile(op_source(body, args, result))
    g = _graph()
    xs = signature_inputs(fn, g, seed=1)
    rest = xs[1:]
    for transform in (torch.func.grad, torch.func.vmap):
        with pytest.raises(RuntimeError, match=r"gnnc: @f cannot run under torch.func"):
            transform(lambda a: fn(g, a, *rest).sum())(xs[0])
    with fwAD.dual_level():
        dual = fwAD.make_dual(xs[0], torch.ones_like(xs[0]))
        with pytest.raises(RuntimeError, match=r"argument #1 is a forward-mode AD dual"):
            fn(g, dual, *rest)
    layer = gnnc.nn.GCNConv(4, 3).double().to(DEVICE)
    ei = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]], device=DEVICE)
    x = torch.randn(4, 4, dtype=torch.float64, device=DEVICE)
    with pytest.raises(RuntimeError, match=r"cannot run under torch.func"):
        torch.func.grad(lambda a: layer(a, ei).sum())(x)
    assert layer(x, ei).shape == (4, 3)


def test_compile_from_path():
    fn = gnnc.compile(str(ROOT / "examples" / "gcn.mlir"))
    assert fn.function == "gcn"


def test_compile_refuses_a_function_name_that_is_no_str():
    # It reached the native module, whose binding layer listed C++
    # signatures ("signature(): incompatible function arguments").
    with pytest.raises(TypeError, match=r"gnnc.compile: function is the name of a "
                                        r"function of the module \(a str\) or None .* "
                                        r"got int 3"):
        gnnc.compile(str(ROOT / "examples" / "gcn.mlir"), 3)


def test_compile_of_a_word_naming_no_file_says_how_it_was_read(tmp_path):
    # A one-word string that names no file is parsed as IR (the documented
    # rule); the parse error alone ("expected operation name in quotes")
    # did not say why. A folder is read as a path (it was parsed as IR).
    missing = str(tmp_path / "no" / "such" / "file")
    with pytest.raises(gnnc.CompileError, match=r"expected operation name(.|\n)*"
                                                r"gnnc.compile read '.*no/such/file' as "
                                                r"IR text: .* no such file exists here"):
        gnnc.compile(missing)
    with pytest.raises(gnnc.CompileError, match=r"cannot read the file: it is a directory"):
        gnnc.compile(str(tmp_path))


BIPARTITE_SUM = """
func.func @b(%g: !gnn.graph<bipartite>, %x: tensor<?x3xf64> {gnn.domain = "src"},
             %y: tensor<?x3xf64> {gnn.domain = "dst"}) -> tensor<?x3xf64> {
  %o = gnn.spmm sum %g, %x : !gnn.graph<bipartite>, tensor<?x3xf64> -> tensor<?x3xf64>
  return %o : tensor<?x3xf64>
}
"""
PLAIN_SUM = """
func.func @f(%g: !gnn.graph, %x: tensor<?x3xf64>) -> tensor<?x3xf64> {
  %o = gnn.spmm sum %g, %x : tensor<?x3xf64> -> tensor<?x3xf64>
  return %o : tensor<?x3xf64>
}
"""


def test_num_nodes_is_checked_against_the_functions_graph():
    # A bipartite function takes (num_src, num_dst), one of one node set a
    # count ((n, n) is that count): the wrong form was taken and the
    # tensors' shapes refused instead (naming an argument, not num_nodes),
    # and (4, 6) on a graph of one node set ran on 6 nodes.
    ei = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]], device=DEVICE)
    fb, f = gnnc.compile(BIPARTITE_SUM), gnnc.compile(PLAIN_SUM)
    x = torch.randn(5, 3, dtype=torch.float64, device=DEVICE)
    with pytest.raises(ValueError, match=r"@b takes a bipartite graph "
                                         r"\(!gnn.graph<bipartite>\): pass "
                                         r"num_nodes=\(num_src, num_dst\), got 5"):
        fb(ei, x, x[:4], num_nodes=5)
    out = fb(ei, x, x[:4], num_nodes=(5, 4))
    assert out.shape == (4, 3)
    with pytest.raises(ValueError, match=r"@f takes a graph of one node set: num_nodes "
                                         r"is one count \(or \(n, n\)\), got \(4, 6\)"):
        f(ei, torch.randn(6, 3, dtype=torch.float64, device=DEVICE), num_nodes=(4, 6))
    torch.testing.assert_close(f(ei, x[:4], num_nodes=(4, 4)), f(ei, x[:4], num_nodes=4))


def test_graph_from_a_meta_edge_index_needs_num_nodes():
    ei = torch.zeros(2, 3, dtype=torch.long, device="meta")
    with pytest.raises(ValueError, match=r"pass num_nodes= with a meta edge_index"):
        gnnc.Graph.from_edge_index(ei)
    assert gnnc.Graph.from_edge_index(ei, num_nodes=4).num_nodes == 4


MASKED_SOFTMAX = """
func.func @f(%g: !gnn.graph, %s: tensor<?xT> {gnn.domain = "edge"MARK},
             %keep: tensor<?xT> {gnn.domain = "edge"}, %x: tensor<?x4xT>MARKX) -> tensor<?x4xT> {
  %c0 = arith.constant 0 : index
  %half = arith.constant 0.5 : T
  %ninf = arith.constant 0xFF800000 : T
  %ne = tensor.dim %s, %c0 : tensor<?xT>
  %e = tensor.empty(%ne) : tensor<?xT>
  %m = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                        affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%s, %keep : tensor<?xT>, tensor<?xT>) outs(%e : tensor<?xT>) {
  ^bb0(%a: T, %k: T, %o: T):
    %p = arith.cmpf ogt, %k, %half : T
    %r = arith.select %p, %a, %ninf : T
    linalg.yield %r : T
  } -> tensor<?xT>
  %alpha = gnn.edge_softmax %g, %m : tensor<?xT>
  %out = gnn.spmm sum %g, %x weights(%alpha : tensor<?xT>) : tensor<?x4xT> -> tensor<?x4xT>
  return %out : tensor<?x4xT>
}
"""


@pytest.mark.parametrize("marked", [False, True])
def test_gradient_of_a_mask_argument(marked):
    # An edge argument that only feeds a comparison: its gradient (zero)
    # still has the edge domain; with {gnn.differentiable} marks, only the
    # marked arguments get a gradient at all.
    mark = ", gnn.differentiable" if marked else ""
    src = (MASKED_SOFTMAX.replace("MARKX", " {gnn.differentiable}" if marked else "")
           .replace("MARK", mark).replace("0xFF800000 : T", "0xFF800000 : f32")
           .replace("T", "f32"))
    fn = gnnc.compile(src)
    g = _graph()
    s = torch.randn(g.num_edges, device=DEVICE, requires_grad=True)
    keep = torch.tensor([1.0, 0, 1, 1, 1, 1, 1], device=DEVICE, requires_grad=True)
    x = torch.randn(g.num_nodes, 4, device=DEVICE, requires_grad=True)
    fn(g, s, keep, x).sum().backward()
    assert s.grad is not None and x.grad is not None
    if marked:
        assert keep.grad is None
    else:
        assert torch.equal(keep.grad, torch.zeros_like(keep))


@pytest.mark.parametrize("reduce", ["max", "min"])
@pytest.mark.parametrize("reversed_", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_extremum_ties_share_like_torch(reduce, reversed_, dtype):
    # Inputs of three values: nearly every element ties. Node 0 has 2000
    # in- and out-edges (on CUDA its ties are walked by a whole block, the
    # walkers holding more than two matches each), the rest short rows
    # (walked by their own team), duplicate edges included; 40 features
    # leave part of a team idle. The gradient splits evenly among the
    # attaining edges, as torch.scatter_reduce's does.
    gen = torch.Generator().manual_seed(7)
    n, hub = 2100, 2000
    leaves = torch.arange(1, hub + 1)
    rand = torch.randint(1, n, (2, 3000), generator=gen)
    ei = torch.cat([torch.stack([leaves, torch.zeros_like(leaves)]),
                    torch.stack([torch.zeros_like(leaves), leaves]),
                    rand, rand[:, :300]], dim=1).to(DEVICE)
    g = gnnc.Graph.from_edge_index(ei, num_nodes=n)
    t = "f32" if dtype == torch.float32 else "f64"
    flag = " reversed" if reversed_ else ""
    fn = gnnc.compile(op_source(
        f"  %r = gnn.spmm {reduce} %g, %x{flag} : tensor<?x40xT> -> tensor<?x40xT>",
        "%x: tensor<?x40xT>", "tensor<?x40xT>", t))
    # (Not 0: torch's backward also counts the zeros `scatter` starts from
    # where they equal the result, include_self=False or not.)
    x = torch.randint(1, 4, (n, 40), generator=gen).to(dtype)
    dy = torch.randint(-4, 5, (n, 40), generator=gen).to(dtype)
    x, dy = x.to(DEVICE), dy.to(DEVICE)
    src, dst = (ei[1], ei[0]) if reversed_ else (ei[0], ei[1])
    xg = x.clone().requires_grad_()
    xr = x.clone().requires_grad_()
    out = fn(g, xg)
    want = scatter(xr[src], dst, n, "a" + reduce)
    torch.testing.assert_close(out, want, rtol=0, atol=0)
    (out * dy).sum().backward()
    (want * dy).sum().backward()
    # float32: the hub's row sums some 2000 shares, in the atomics' order on
    # CUDA (1.4e-5 off at worst, seen).
    tol = 1e-4 if dtype == torch.float32 else 1e-12
    torch.testing.assert_close(xg.grad, xr.grad, rtol=tol, atol=tol)


@pytest.mark.parametrize("reduce", ["max", "min"])
@pytest.mark.parametrize("reversed_", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_extremum_ties_in_long_rows(reduce, reversed_, dtype):
    # Rows of 300, 1100 and 2600 edges (above a block of 256 and of 1024:
    # on CUDA resolved by the edge blocks, spread over the grid) and short
    # rows, 72 features (two full slices of 32 and one of 8). In each slice
    # of a long row, a chosen number of elements tie (1, 3, 5, 12, 17 or
    # all 32), each tie among 2, 3, 9 or all of the row's edges, and some
    # elements have a NaN extremum; a hub's duplicate edges count twice
    # where they attain it. The gradient splits evenly among the attaining edges, as
    # torch.scatter_reduce's does, NaN for every edge of a NaN extremum.
    gen = torch.Generator().manual_seed(11)
    feats, degrees = 72, [300, 1100, 2600]
    hubs = len(degrees)
    leaves = sum(degrees)
    n = hubs + leaves + 400
    rows, cols, first = [], [], hubs
    for h, deg in enumerate(degrees):
        rows.append(torch.full((deg,), h))
        cols.append(torch.arange(first, first + deg))
        first += deg
    # Short rows among the other nodes (they feed no hub).
    rand = torch.randint(hubs + leaves, n, (2, 3000), generator=gen)
    dup = cols[2][:40]  # a hub's duplicate edges
    dst = torch.cat(rows + [rand[1], torch.full((40,), 2)])
    src = torch.cat(cols + [rand[0], dup])
    # Integers exact in bf16: 300 where an element ties, below elsewhere.
    x = -torch.randint(1, 200, (n, feats), generator=gen).double()
    x[hubs + leaves:] = torch.randint(1, 4, (n - hubs - leaves, feats),
                                      generator=gen).double()
    counts = [1, 3, 5, 12, 17, 32]
    sizes = [2, 3, 9, None]  # None: every edge of the row
    first = hubs
    for h, deg in enumerate(degrees):
        mine = torch.arange(first, first + deg)
        first += deg
        for j in range(3):
            width = min(32, feats - 32 * j)
            k = min(counts[(2 * h + j) % len(counts)], width)
            for i, lane in enumerate(torch.randperm(width, generator=gen)[:k]):
                f = 32 * j + int(lane)
                size = sizes[(h + i) % len(sizes)] or deg
                pick = mine[torch.randperm(deg, generator=gen)[:size]]
                x[pick, f] = 300.0
            # The slice's last element gets a single winner, its first a NaN
            # extremum (either may replace a tie).
            f = 32 * j + width - 1
            x[mine[torch.randint(deg, (1,), generator=gen)], f] = 302.0
            x[mine[torch.randint(deg, (1,), generator=gen)], 32 * j] = float("nan")
    if reduce == "min":
        x = -x
    ei = torch.stack([dst, src]) if reversed_ else torch.stack([src, dst])
    g = gnnc.Graph.from_edge_index(ei.to(DEVICE), num_nodes=n)
    t = "f32" if dtype == torch.float32 else "bf16"
    flag = " reversed" if reversed_ else ""
    fn = gnnc.compile(op_source(
        f"  %r = gnn.spmm {reduce} %g, %x{flag} : tensor<?x{feats}xT> -> tensor<?x{feats}xT>",
        f"%x: tensor<?x{feats}xT>", f"tensor<?x{feats}xT>", t))
    dy = torch.randint(-4, 5, (n, feats), generator=gen).double()
    xg = x.to(dtype).to(DEVICE).requires_grad_()
    xr = x.clone().requires_grad_()
    out = fn(g, xg)
    want = scatter(xr[src], dst, n, "a" + reduce)
    torch.testing.assert_close(out.double().cpu(), want, rtol=0, atol=0,
                               equal_nan=True)
    (out * dy.to(dtype).to(DEVICE)).sum().backward()
    (want * dy).sum().backward()
    assert xr.grad.isnan().any()  # the NaN extrema reach their edges
    got = xg.grad.double().cpu()
    if dtype == torch.float32:
        torch.testing.assert_close(got, xr.grad, rtol=1e-5, atol=1e-5,
                                   equal_nan=True)
        return
    # bf16: each share (dy / 3, dy / 9, ...) is rounded to the storage type
    # before the edges' shares are added (relative error at most 2^-9 each),
    # and so is the sum: a node attaining many rows' extrema with shares of
    # both signs can lose most of its (small) gradient to the shares'
    # rounding (16 shares summing to -0.0238 give -0.0117 here), within the
    # bound sum |share| 2^-8 + |grad| 2^-8 per element, which this checks.
    xa = x.clone().requires_grad_()
    (scatter(xa[src], dst, n, "a" + reduce) * dy.abs()).sum().backward()
    nan = xr.grad.isnan()
    assert torch.equal(got.isnan(), nan)
    bound = (xa.grad.abs() + xr.grad.abs()) * 2.0**-8 + 1e-12
    err = (got - xr.grad).abs()
    assert (err[~nan] <= bound[~nan]).all(), \
        f"worst error {float((err - bound)[~nan].max())} above the bound"


@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_a_sparse_tensor_as_edge_index_is_named(layout):
    """A sparse tensor where an edge_index goes raised PyTorch's internal
    "copy_() between dense and sparse Tensors is not implemented"."""
    ei = torch.tensor([[0, 1, 0], [1, 2, 0]], device=DEVICE)
    sparse = ei.to_sparse() if layout == "coo" else ei.to_sparse_csr()
    with pytest.raises(TypeError, match=r"edge_index must be a dense \[2, E\] integer "
                                        r"tensor, got a torch.sparse_"):
        gnnc.Graph.from_edge_index(sparse, num_nodes=3)


def _gine_step_calls(dtype=torch.float64, nodes=30, edges=90):
    """The gnnc op calls of one GINEConv training step (edge_dim 3, a two-map
    nn folded into its function: residuals of node and edge rows), as
    (name, args, output) triples, and the layer's input gradient."""
    import gnnc.nn
    from torch.utils._python_dispatch import TorchDispatchMode

    calls = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if func.namespace == "gnnc":
                calls.append((func.name(), args, out))
            return out

    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                              torch.nn.Linear(16, 16))
    conv = gnnc.nn.GINEConv(mlp, train_eps=True, edge_dim=3).to(DEVICE, dtype)
    x = torch.randn(nodes, 8, dtype=dtype, device=DEVICE, requires_grad=True)
    ei = torch.randint(0, max(nodes, 1), (2, edges), device=DEVICE)
    ea = torch.randn(edges, 3, dtype=dtype, device=DEVICE)
    with Record():
        conv(x, ei, ea).square().sum().backward()
    return calls, x.grad


def test_every_output_is_an_allocation_of_its_own():
    # A custom op's outputs must not alias its inputs or each other:
    # torch.compile's AOT autograd checks every gnnc op call against that
    # (torch._functorch.config.error_on_custom_op_aliasing; an error in CI
    # and from PyTorch 2.12). Session 51's grouped residuals and parameter
    # gradients (one allocation, ranges of it) broke it. Every gnnc op call of
    # a training step, forward and backward, goes through the same check here.
    calls, _ = _gine_step_calls()
    names = [c[0] for c in calls]
    assert "gnnc::call" in names and "gnnc::call_backward" in names, names
    for name, args, out in calls:
        outs = out if isinstance(out, (list, tuple)) else [out]
        assert len({t.untyped_storage().data_ptr() for t in outs}) == len(outs), name
        # (The check AOT autograd makes: torch/_library/utils.py.)
        assert not torch._C._any_output_is_alias_to_input_or_output(
            args, {}, out if isinstance(out, tuple) else (out,)), name


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("nodes,edges", [(30, 90), (0, 0), (5, 0)])
def test_training_residuals_in_one_byte_tensor(dtype, nodes, edges):
    # A training forward returns its results, then its residuals packed in
    # one uint8 tensor (one allocation, not one per residual: issue 28's
    # host time), each residual from a 256-byte boundary. The fake kernel
    # computes the same size (torch.compile's shapes), and call_backward
    # refuses a byte tensor of another size or dtype.
    calls, _ = _gine_step_calls(dtype, nodes, edges)
    (_, args, outs), = [c for c in calls if c[0] == "gnnc::call"]
    target = args[0]
    compiled, function, base = _core._TARGETS[target]
    own = len(compiled.signature(base)["results"])
    shapes = _core._result_shapes(compiled.signature(function),
                                  _core._op_num_nodes(args[2], args[3]), edges)
    assert len(shapes) > own + 1  # (several residuals, of node and edge rows)
    assert {r["kind"] for r in compiled.signature(function)["results"][own:]} >= {"node"}
    assert len(outs) == own + 1
    packed = outs[own]
    assert packed.dtype == torch.uint8 and packed.dim() == 1
    want = sum((torch.Size(s).numel() * t.itemsize + 255) // 256 * 256
               for s, t in shapes[own:])
    assert packed.numel() == want == _core._residual_bytes(shapes[own:])
    torch.library.opcheck(torch.ops.gnnc.call.default, args,
                          test_utils=("test_schema", "test_faketensor"))
    (_, bargs, _), = [c for c in calls if c[0] == "gnnc::call_backward"]
    for bad, what in ((packed[:-1] if want else packed.new_empty(1), "shape"),
                      (packed.view(torch.int8), "torch.uint8")):
        outputs = list(bargs[6][:own]) + [bad]
        with pytest.raises(RuntimeError, match=r"\[ValueError\] .*output #%d \(the "
                                               r"residuals\) must be a torch.uint8" % (own + 1)):
            torch.ops.gnnc.call_backward(*bargs[:6], outputs, bargs[7])
    with pytest.raises(RuntimeError, match=r"\[TypeError\] .*expected %d tensors \(%d "
                                           r"results and the residuals' bytes\)" % (own + 1, own)):
        torch.ops.gnnc.call_backward(*bargs[:6], list(bargs[6][:own]), bargs[7])


@pytest.mark.skipif(DEVICE.type != "cuda", reason="the alignment copy is the CUDA path's")
def test_residual_bytes_off_their_boundary_are_copied():
    # call_backward given the residuals' bytes at an address off the
    # 256-byte boundary their layout assumes (a caller's view) copies them
    # first: the same gradients as from the forward's own tensor.
    calls, _ = _gine_step_calls(torch.float32)
    (_, bargs, grads), = [c for c in calls if c[0] == "gnnc::call_backward"]
    outputs = list(bargs[6])
    packed = outputs[-1]
    shifted = packed.new_zeros(packed.numel() + 16)[16:]
    shifted.copy_(packed)
    again = torch.ops.gnnc.call_backward(*bargs[:6], outputs[:-1] + [shifted], bargs[7])
    for a, b in zip(again, grads):
        assert torch.equal(a, b)


def test_release_host_memory_gives_back_the_kept_blocks():
    # The CPU path keeps the large tensors an evaluation frees for the next
    # step (lib/Tensor/Tensor.cpp): after a step on 20,000 edges (edge
    # tensors of 20,000 x 16 doubles, 2.5 MiB) some are kept, release gives
    # them all back (and says how many bytes), and a step after it computes
    # the same values from fresh memory.
    import gnnc
    import gnnc.nn
    torch.manual_seed(0)
    n, e = 2000, 20000
    ei = torch.randint(0, n, (2, e))
    x = torch.randn(n, 16, requires_grad=True)
    layer = gnnc.nn.GINEConv(torch.nn.Linear(16, 16), train_eps=True, edge_dim=4)
    edge_attr = torch.randn(e, 4)

    def step():
        x.grad = None
        out = layer(x, ei, edge_attr)
        out.square().sum().backward()
        return out.detach().clone(), x.grad.clone()

    first = step()
    kept = gnnc._gnnc.host_memory_kept()
    assert kept >= 2 * 20000 * 16 * 8
    assert gnnc.release_host_memory() == kept
    assert gnnc._gnnc.host_memory_kept() == 0
    assert gnnc.release_host_memory() == 0
    again = step()
    assert torch.equal(first[0], again[0]) and torch.equal(first[1], again[1])
