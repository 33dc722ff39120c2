"""Issue 33: PyG layers that gnnc does not ship, written by a user as
gnnc.MessagePassing subclasses (examples/python/mp_layers.py).

For each layer: equal to PyG's layer under the same weights in float32
(output, and the gradients of the input and of every parameter), a float64
gradcheck of the input and the parameters on a tiny graph, and the compiled
Programs (forward, and the training forward and backward) hold no
``edges x features`` buffer: every buffer sized by the edges has at most one
value per edge and attention head. The Programs come from
``gnn-translate --gnn-to-program`` (the build's tool, next to the package or
on PATH; the test is skipped without it) on the module gnnc compiled.
"""

import copy
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
import torch

gnnc = pytest.importorskip("gnnc")
pyg_nn = pytest.importorskip("torch_geometric.nn", reason="torch_geometric is not installed")

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "python"))
import mp_layers  # noqa: E402

DEVICE = torch.device(os.environ.get("GNNC_TEST_DEVICE", "cpu"))

if DEVICE.type == "cuda" and not (torch.cuda.is_available() and gnnc.cuda_available()):
    pytest.skip("GNNC_TEST_DEVICE=cuda without a usable GPU", allow_module_level=True)

C = 16  # channels: wider than any head count, so an E x C buffer stands out


def _graph():
    # A duplicate edge (0->1 twice), a self-loop (2->2), an isolated node (5).
    ei = torch.tensor([[0, 0, 2, 3, 2, 4, 1, 6, 3],
                       [1, 1, 2, 1, 0, 3, 4, 3, 6]], device=DEVICE)
    return ei, 7


def _deg_histogram(ei, n):
    deg = torch.bincount(ei[1], minlength=n)
    return torch.bincount(deg)


# --------------------------------------------------------------------------
# The layers and PyG's, with the same weights. Each case: (ours, theirs,
# extra inputs after x and edge_index, attention heads).

def _randomise(module, seed):
    """Nonzero values (biases, attention vectors) in every parameter."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.rand(p.shape, generator=g) * 1.0 - 0.5)


def _case(name, dtype, c=C):
    ei, n = _graph()
    torch.manual_seed(0)
    extra, heads = (), 1
    if name == "GENConv":
        ours, theirs = mp_layers.GENConv(c, c), pyg_nn.GENConv(c, c)
    elif name == "GENConv_learn_t_lin":
        ours = mp_layers.GENConv(c - 4, c, t=0.7, learn_t=True, num_layers=3)
        theirs = pyg_nn.GENConv(c - 4, c, t=0.7, learn_t=True, num_layers=3)
    elif name == "GatedGraphConv":
        ours, theirs = mp_layers.GatedGraphConv(c, 3), pyg_nn.GatedGraphConv(c, 3)
        extra = (torch.rand(ei.size(1), device=DEVICE, dtype=dtype),)
    elif name.startswith("SuperGATConv"):
        kind = name[-2:]
        heads = 2
        ours = mp_layers.SuperGATConv(c, c // 2, heads=heads, attention_type=kind)
        theirs = pyg_nn.SuperGATConv(c, c // 2, heads=heads, attention_type=kind)
        ours.eval(), theirs.eval()
    elif name == "LEConv":
        ours, theirs = mp_layers.LEConv(c, c), pyg_nn.LEConv(c, c)
        extra = (torch.rand(ei.size(1), device=DEVICE, dtype=dtype),)
    elif name == "EdgeConv":
        # nn a Linear: with an MLP, its hidden layer is an E x hidden tensor
        # by necessity (the second Linear takes a nonlinear edge value).
        lin = torch.nn.Linear(2 * c, c)
        ours, theirs = mp_layers.EdgeConv(lin), pyg_nn.EdgeConv(copy.deepcopy(lin))
    elif name == "ResGatedGraphConv":
        ours, theirs = mp_layers.ResGatedGraphConv(c, c), pyg_nn.ResGatedGraphConv(c, c)
    elif name == "APPNP":
        ours, theirs = mp_layers.APPNP(3, 0.1), pyg_nn.APPNP(3, 0.1)
    elif name == "FAConv":
        x0 = torch.randn(n, c, device=DEVICE, dtype=dtype)
        ours = _InitialFeatures(mp_layers.FAConv(c, eps=0.3), x0)
        theirs = _InitialFeatures(pyg_nn.FAConv(c, eps=0.3), x0)
    elif name == "PNAConv":
        deg = _deg_histogram(ei, n)
        ours = mp_layers.PNAConv(c, c, deg)
        theirs = pyg_nn.PNAConv(c, c, ["mean", "min", "max", "std"],
                                ["identity", "amplification", "attenuation"], deg)
    elif name == "CGConv":
        ours, theirs = mp_layers.CGConv(c), pyg_nn.CGConv(c)
    elif name == "CGConv_edge_attr":
        ours, theirs = mp_layers.CGConv(c, dim=3), pyg_nn.CGConv(c, dim=3)
        extra = (torch.randn(ei.size(1), 3, device=DEVICE, dtype=dtype),)
    elif name == "TAGConv":
        ours, theirs = mp_layers.TAGConv(c, c - 2, K=3), pyg_nn.TAGConv(c, c - 2, K=3)
    else:
        raise ValueError(name)
    ours = ours.to(device=DEVICE, dtype=dtype)
    theirs = theirs.to(device=DEVICE, dtype=dtype)
    _randomise(theirs, 1)
    mp_layers.load_pyg_state(ours, theirs)
    return ours, theirs, ei, n, extra, heads


LAYERS = ["GENConv", "GENConv_learn_t_lin", "GatedGraphConv", "SuperGATConv_MX",
          "SuperGATConv_SD", "LEConv", "PNAConv", "EdgeConv", "ResGatedGraphConv", "APPNP",
          "FAConv", "CGConv", "CGConv_edge_attr", "TAGConv"]


class _InitialFeatures(torch.nn.Module):
    """FAConv(x, x_0, edge_index) called as layer(x, edge_index), with x_0
    a buffer."""

    def __init__(self, layer, x0):
        super().__init__()
        self.layer = layer
        self.register_buffer("x0", x0)

    def forward(self, x, edge_index):
        return self.layer(x, self.x0, edge_index)


def _features(name, n, c=C, **kw):
    return torch.randn(n, c - 4 if name == "GENConv_learn_t_lin" else c, device=DEVICE, **kw)


def _equals_pyg(name, dtype, tol):
    """Output, input gradient and every parameter's gradient as PyG's."""
    ours, theirs, ei, n, extra, _ = _case(name, dtype)
    x = _features(name, n, dtype=dtype)
    xo, xt = x.clone().requires_grad_(), x.clone().requires_grad_()
    got, want = ours(xo, ei, *extra), theirs(xt, ei, *extra)
    torch.testing.assert_close(got, want, **tol)
    dy = torch.randn_like(want)
    ps = dict(ours.named_parameters())
    theirs_ps = dict(theirs.named_parameters())
    gs = torch.autograd.grad(got, [xo] + list(ps.values()), dy)
    wants = torch.autograd.grad(want, [xt] + [theirs_ps[mp_layers.pyg_name(k)] for k in ps], dy)
    for k, a, b in zip(["x"] + list(ps), gs, wants):
        torch.testing.assert_close(a, b, **tol, msg=lambda m: f"{k}: {m}")


# PNAConv's std is sqrt(mean(h * h) - mean(h)^2), as PyG computes it: in
# float32 the difference cancels, and PyG's and gnnc's summation orders
# leave a few gradient entries apart by ~1e-3 relative.
_F32_TOL = {"PNAConv": dict(rtol=1e-3, atol=1e-4)}


@pytest.mark.parametrize("name", LAYERS)
def test_equals_pyg_in_float32(name):
    _equals_pyg(name, torch.float32, _F32_TOL.get(name, dict(rtol=1e-4, atol=1e-5)))


@pytest.mark.parametrize("name", ["PNAConv", "EdgeConv"])
def test_max_min_layers_equal_pyg_in_float64(name):
    _equals_pyg(name, torch.float64, {})


@pytest.mark.parametrize("name", LAYERS)
def test_gradcheck_float64(name):
    # Fewer channels: gradcheck perturbs every parameter element.
    ours, _, ei, n, extra, _ = _case(name, torch.float64, c=6)
    x = _features(name, n, c=6, dtype=torch.float64, requires_grad=True)
    names = [k for k, _ in ours.named_parameters()]
    params = [p.detach().clone().requires_grad_() for p in ours.parameters()]
    buffers = dict(ours.named_buffers())

    def fn(x, *ps):
        state = dict(zip(names, ps), **buffers)
        return torch.func.functional_call(ours, state, (x, ei) + extra)

    assert torch.autograd.gradcheck(fn, (x, *params))


# --------------------------------------------------------------------------
# No edges x features buffer in the Programs.

def _translate_tool():
    near = pathlib.Path(gnnc.__file__).resolve().parents[2] / "bin" / "gnn-translate"
    if near.is_file():
        return str(near)
    return shutil.which("gnn-translate")


def _programs(fn, tmp_path):
    """The runtime Programs (JSON) of the module ``fn`` (a gnnc.Function)
    was compiled from: its function and, differentiated, the training
    forward and backward."""
    tool = _translate_tool()
    if tool is None:
        pytest.skip("gnn-translate not found (next to the gnnc package or on PATH)")
    path = tmp_path / f"{fn.function}.mlir"
    path.write_text(fn._compiled.module.text())
    text = subprocess.run([tool, "--gnn-to-program", str(path)], check=True,
                          capture_output=True, text=True).stdout
    dec, i, out = json.JSONDecoder(), 0, []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            return out
        program, i = dec.raw_decode(text, i)
        out.append(program)


_PER_EDGE = re.compile(r"^edges \* (\d+)$")


# CGConv with edge features projects them per edge (e @ W_e: an E x C
# value, as in PyG), which the edge kernels do not compute in registers yet.
@pytest.mark.parametrize("name", [k for k in LAYERS if k != "CGConv_edge_attr"])
def test_no_edges_by_features_buffer(name, tmp_path):
    ours, _, ei, n, extra, heads = _case(name, torch.float32)
    x = _features(name, n, requires_grad=True)
    ours(x, ei, *extra).sum().backward()
    layer = getattr(ours, "layer", ours)  # FAConv's is wrapped
    fns = {plan.fn.function: plan.fn for plan in layer._plans.values()}
    assert fns
    for fn in fns.values():
        assert fn._forward is not None, fn._grad_error
        programs = _programs(fn, tmp_path)
        assert {p["name"] for p in programs} >= {fn.function, fn._forward}
        for p in programs:
            for b in p["buffers"]:
                if b["role"] == "input" or "edges" not in b["size"]:
                    continue
                m = _PER_EDGE.match(b["size"])
                assert m and int(m.group(1)) <= heads, \
                    f"{p['name']}: {b['role']} buffer {b['name']} of {b['size']}"


def test_a_model_of_these_layers_compiles_without_graph_breaks():
    """torch.compile(fullgraph=True) of a model of the layers whose forward
    has no data-dependent shape (SuperGAT removes self-loops, whose count
    depends on the values, as PyG's layer does: a graph break there as in
    PyG; APPNP's and FAConv's loops weigh the graph's own loops 0 instead)."""
    ei, n = _graph()
    torch.manual_seed(3)
    deg = torch.bincount(torch.bincount(ei[1].cpu(), minlength=n))

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gen = mp_layers.GENConv(C, C)
            self.le = mp_layers.LEConv(C, C)
            self.edge = mp_layers.EdgeConv(torch.nn.Linear(2 * C, C))
            self.gated = mp_layers.GatedGraphConv(C, 2)
            self.pna = mp_layers.PNAConv(C, C, deg)
            self.res = mp_layers.ResGatedGraphConv(C, C)
            self.appnp = mp_layers.APPNP(3, 0.1)
            self.tag = mp_layers.TAGConv(C, C, K=2)
            self.fa = mp_layers.FAConv(C, eps=0.1)

        def forward(self, x, edge_index):
            x = torch.relu(self.gen(x, edge_index))
            x = torch.relu(self.le(x, edge_index))
            x = torch.relu(self.pna(x, edge_index))
            x = torch.relu(self.res(x, edge_index))
            x = torch.relu(self.tag(self.appnp(x, edge_index), edge_index))
            x = self.fa(x, x, edge_index)
            return self.gated(self.edge(x, edge_index), edge_index)

    model = Model().to(DEVICE)
    x = _features("GENConv", n)
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(model)(x, ei)
    assert explanation.graph_break_count == 0, explanation.break_reasons
    torch._dynamo.reset()
    got = torch.compile(model, fullgraph=True)(x, ei)
    torch.testing.assert_close(got, model(x, ei))
