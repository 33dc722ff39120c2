"""gnnc.nn layers' call plans (nn/_plan.py): a GIN, GINE, GCN, SAGE, GAT,
GATv2, Transformer or AGNN layer's later calls take what its last full call decided unless something
that decision read changed. Each test changes one thing at a time on both
libraries' layers (or the inputs) and compares outputs and every gradient
with PyG's, and whether the call took the plan."""
import copy

import pytest
import torch

from _parity import tol
from test_nn import IN, OUT, features, gnn, loop_free_graph, make, mlp, tiny_graph


class _Scale(torch.nn.Module):
    def forward(self, w):
        return 2 * w


def _plan_step(step: str, planned: bool, full_path: list, ours, pyg, x, args) -> None:
    """One step of the plan tests: `ours(x, *args)` and PyG's layer on a
    copy of x; whether ours took its plan (`full_path`, which the test's
    probe on the full path appends to, empty; cleared first); outputs and
    the gradients of x and of every parameter equal PyG's (then cleared)."""
    full_path.clear()
    x1 = x.requires_grad_()
    x2 = x1.detach().clone().requires_grad_()
    out1, out2 = ours(x1, *args), pyg(x2, *args)
    assert (not full_path) == planned, step
    t = tol(x.dtype)
    torch.testing.assert_close(out1, out2, **t, msg=step)
    out1.square().sum().backward()
    out2.square().sum().backward()
    torch.testing.assert_close(x1.grad, x2.grad, **t, msg=step)
    theirs = dict(pyg.named_parameters())
    for name, p in ours.named_parameters():
        torch.testing.assert_close(p.grad, theirs[name].grad, **t, msg=f"{step} {name}")
        p.grad = theirs[name].grad = None


def _dtype_and_flow_steps(check, both) -> None:
    """The steps every plan test takes (`check(step, planned, dtype=...)`
    one call on both layers, `both(f)` f applied to both): the layers in
    float32, then float64 again, then the other flow."""
    both(lambda m: m.float())
    check("float32", planned=False, dtype=torch.float32)
    check("and planned", planned=True, dtype=torch.float32)
    both(lambda m: m.double())
    check("float64 again", planned=False)
    both(lambda m: setattr(m, "flow", "target_to_source"))
    check("the other flow", planned=False)
    check("and planned", planned=True)


@pytest.mark.parametrize("kind", ["gin", "gine"])
def test_gin_plans_follow_every_change_to_the_layer_and_its_inputs(kind, monkeypatch):
    """GIN's and GINE's later calls take the fold their last full call
    decided (conv._GinPlan) unless something it read changed: each step
    below changes one thing on both libraries' layers (or the inputs) and
    compares output and gradients with PyG's in float64, and whether the
    call took the plan (no second inspection of nn) where it should."""
    from gnnc.nn import conv
    edge_index, n = tiny_graph()
    e = edge_index.size(1)
    kw = dict(nn=lambda: mlp(IN, OUT), eps=0.1, train_eps=True)
    if kind == "gine":
        kw["edge_dim"] = 3
    ours, pyg = make((kind, "GINConv" if kind == "gin" else "GINEConv", (), kw),
                     torch.float64)
    inspected = []
    real = conv._leading_mlp
    monkeypatch.setattr(conv, "_leading_mlp",
                        lambda *a: inspected.append(1) or real(*a))
    torch.manual_seed(5)
    ea = torch.randn(e, 3, dtype=torch.float64)
    calls = []

    def hook(m, a, o):
        calls.append(1)

    def both(f):
        f(ours), f(pyg)

    def check(step, planned, dtype=torch.float64, ei=edge_index, x_in=None):
        extra = () if kind == "gin" else (ea.to(dtype),)
        _plan_step(step, planned, inspected, ours, pyg,
                   features(n, dtype) if x_in is None else x_in, (ei, *extra))

    check("first call", planned=False)
    check("second call", planned=True)
    with torch.no_grad():
        both(lambda m: m.nn[0].weight.add_(0.5))
    check("weights written in place", planned=True)
    handle = ours.nn[0].register_forward_hook(hook)
    pyg.nn[0].register_forward_hook(lambda *a: None)
    check("hook on the first Linear", planned=False)
    assert calls == [1]
    handle.remove()
    check("hook removed: decided again", planned=False)
    check("and planned", planned=True)
    torch.manual_seed(7)
    new = torch.nn.Linear(5, OUT).double()
    ours.nn[2], pyg.nn[2] = new, copy.deepcopy(new)
    check("a Linear replaced", planned=False)
    check("and planned", planned=True)
    both(lambda m: setattr(m, "eps", torch.nn.Parameter(torch.tensor([0.3],
                                                                     dtype=torch.float64))))
    check("eps replaced", planned=False)
    both(lambda m: torch.nn.utils.parametrize.register_parametrization(
        m.nn[0], "weight", _Scale()))
    check("a parametrization", planned=False)
    check("a parametrized Linear is not folded", planned=False)
    both(lambda m: torch.nn.utils.parametrize.remove_parametrizations(m.nn[0], "weight"))
    check("parametrization removed", planned=False)
    check("and planned", planned=True)
    both(lambda m: setattr(m.nn[0], "forward", lambda x, lin=m.nn[0]: torch.tanh(
        torch.nn.functional.linear(x, lin.weight, lin.bias))))
    check("a forward set on the instance", planned=False)
    both(lambda m: m.nn[0].__dict__.pop("forward"))
    check("forward removed", planned=False)
    _dtype_and_flow_steps(check, both)
    other = torch.tensor([[0, 1, 2, 3], [3, 3, 0, 1]])
    if kind == "gin":
        check("another graph", planned=True, ei=other)
    # A copy decides anew and reads its own weights.
    for clone in (copy.deepcopy(ours), _roundtrip(ours)):
        assert clone.__dict__.get("_gnnc_plan") is None
        with torch.no_grad():
            clone.nn[0].weight.mul_(2)
        x = features(n, torch.float64)
        extra = () if kind == "gin" else (ea,)
        assert not torch.allclose(clone(x, edge_index, *extra), ours(x, edge_index, *extra))
    # A planned layer refuses bad inputs as on its first call.
    extra = () if kind == "gin" else (ea,)
    # (x wider than nn's first Linear: PyTorch's error there as in PyG; GINE's
    # lin then projects to another width than x's.)
    error, match = ((RuntimeError, "cannot be multiplied") if kind == "gin" else
                    (ValueError, "dimensionalities do not match"))
    with pytest.raises(error, match=match):
        ours(features(n, torch.float64, channels=IN + 1), edge_index, *extra)
    with pytest.raises(TypeError, match="edge_index of dtype int64"):
        ours(features(n, torch.float64), edge_index.double(), *extra)
    with pytest.raises(ValueError, match="outside \\[0, 2\\) for a graph of 2 nodes"):
        ours(features(2, torch.float64), edge_index, *extra)
    if kind == "gine":
        with pytest.raises(ValueError, match="edge_attr of shape"):
            ours(features(n, torch.float64), edge_index, ea[1:])
        with pytest.raises(ValueError, match="edge_attr is required"):
            ours(features(n, torch.float64), edge_index)
        with pytest.raises(ValueError, match="edge_attr of 3 channels"):
            ours(features(n, torch.float64), edge_index, torch.randn(e, 4, dtype=torch.float64))


@pytest.mark.parametrize("norm", [None, "batch_norm"], ids=["no-norm", "batch-norm"])
def test_gin_plans_with_pygs_mlp_follow_every_change_to_it(norm, monkeypatch):
    """GINConv(MLP(...)), PyG's MLP as `nn` (the whole MLP folded without a
    norm, its first Linear with batch_norm): the later calls take the fold
    (conv._GinPlan) unless something the fold read of the MLP changed
    (conv._mlp_state: its layers, norms, activation, act_first, dropout
    probabilities, mode) or a hook appeared on a module it skips; each step
    against PyG in float64."""
    from torch_geometric.nn.models import MLP
    from gnnc.nn import conv
    edge_index, n = tiny_graph()
    kw = dict(nn=lambda: MLP([IN, 5, OUT], norm=norm), eps=0.1, train_eps=True)
    ours, pyg = make(("gin", "GINConv", (), kw), torch.float64)
    inspected = []
    real = conv._leading_mlp
    monkeypatch.setattr(conv, "_leading_mlp", lambda *a: inspected.append(1) or real(*a))

    def both(f):
        f(ours), f(pyg)

    def check(step, planned, dtype=torch.float64):
        _plan_step(step, planned, inspected, ours, pyg, features(n, dtype), (edge_index,))

    both(lambda m: m.eval())  # (batch norm's running statistics: the same on both)
    check("first call", planned=False)
    check("second call", planned=True)
    assert ours.__dict__.get("_gnnc_plan").mlp is not None
    with torch.no_grad():
        both(lambda m: m.nn.lins[0].weight.add_(0.5))
    check("weights written in place", planned=True)
    both(lambda m: setattr(m.nn, "dropout", [0.5, 0.0]))
    check("a dropout probability (eval mode)", planned=False)
    check("and planned", planned=True)
    both(lambda m: m.nn.train())
    both(lambda m: setattr(m.nn, "dropout", [0.0, 0.0]))
    check("training mode, no dropout", planned=False)
    check("and planned", planned=True)
    both(lambda m: m.nn.eval())
    check("eval mode", planned=False)
    both(lambda m: setattr(m.nn, "act", torch.nn.Tanh()))
    check("another activation", planned=False)
    check("and planned", planned=True)
    both(lambda m: setattr(m.nn, "act", torch.nn.ReLU()))
    check("ReLU again", planned=False)
    check("and planned", planned=True)
    both(lambda m: setattr(m.nn, "act_first", not m.nn.act_first))
    check("act_first", planned=False)
    check("and planned", planned=True)
    handles = [m.nn.act.register_forward_hook(lambda *a: None) for m in (ours, pyg)]
    check("a hook on the activation", planned=False)
    for h in handles:
        h.remove()
    check("removed", planned=False)
    check("and planned", planned=True)
    handles = [m.nn.norms[0].register_forward_pre_hook(lambda *a: None) for m in (ours, pyg)]
    check("a hook on the first norm", planned=False)
    for h in handles:
        h.remove()
    check("removed", planned=False)
    torch.manual_seed(3)
    norm0 = torch.nn.BatchNorm1d(5).double().eval()
    with torch.no_grad():
        norm0.running_mean.uniform_(-1, 1)
        norm0.running_var.uniform_(0.5, 2)
    ours.nn.norms[0], pyg.nn.norms[0] = norm0, copy.deepcopy(norm0)
    check("a norm replaced", planned=False)
    check("and planned", planned=True)
    torch.manual_seed(7)
    new = torch.nn.Linear(5, OUT).double()
    ours.nn.lins[1], pyg.nn.lins[1] = new, copy.deepcopy(new)
    check("a Linear replaced", planned=False)
    check("and planned", planned=True)
    _dtype_and_flow_steps(check, both)


def test_gnnc_gin_models_layers_take_their_plans(monkeypatch):
    """gnnc.nn.GIN (PyG's models.GIN: each layer's nn gnnc's copy of PyG's
    MLP) takes its layers' plans from the second call on, training and
    evaluating, with PyG's outputs and gradients."""
    from torch_geometric.nn import models as pyg_models
    from gnnc.nn import conv
    edge_index, n = tiny_graph()
    torch.manual_seed(0)
    pyg = pyg_models.GIN(IN, 6, 2, OUT)
    ours = gnn.GIN(IN, 6, 2, OUT)
    ours.load_state_dict(pyg.state_dict())
    ours, pyg = ours.double(), pyg.double()
    inspected = []
    real = conv._leading_mlp
    monkeypatch.setattr(conv, "_leading_mlp", lambda *a: inspected.append(1) or real(*a))
    for mode in ("train", "eval"):
        getattr(ours, mode)(), getattr(pyg, mode)()
        _plan_step(f"{mode}: first call", False, inspected, ours, pyg,
                   features(n, torch.float64), (edge_index,))
        _plan_step(f"{mode}: planned", True, inspected, ours, pyg,
                   features(n, torch.float64), (edge_index,))


def _linear_replaced(check, ours, pyg, linear: str) -> None:
    """gnnc's Linear `linear` (an attribute name) replaced by a copy with
    other weights (PyG's given the same weight): decided again, then
    planned."""
    new = copy.deepcopy(getattr(ours, linear))
    with torch.no_grad():
        new.weight.copy_(0.3 * torch.randn(new.weight.shape, dtype=new.weight.dtype,
                                           generator=torch.Generator().manual_seed(7)))
    setattr(ours, linear, new)
    getattr(pyg, linear).weight = torch.nn.Parameter(new.weight.detach().clone())
    check(f"{linear} replaced", planned=False)
    check("and planned", planned=True)


def _option_steps(check, both, changes) -> None:
    """Each (attribute, value, step) of `changes` set on both layers in
    turn: the next call decides again, the one after takes the plan."""
    for attr, value, step in changes:
        both(lambda m: setattr(m, attr, value))
        check(step, planned=False)
        check("and planned", planned=True)


def _parametrization_steps(check, both, linear: str) -> None:
    """The layers' Linear `linear` (an attribute name) parametrized, its
    weight read through the parametrization (never planned), then the
    parametrization removed: decided again, then planned."""
    both(lambda m: torch.nn.utils.parametrize.register_parametrization(
        getattr(m, linear), "weight", _Scale()))
    check("a parametrization", planned=False)
    check("a parametrized weight is read through it", planned=False)
    both(lambda m: torch.nn.utils.parametrize.remove_parametrizations(
        getattr(m, linear), "weight"))
    check("parametrization removed", planned=False)
    check("and planned", planned=True)


def _bias_and_lin_steps(check, both, width: int, linear: str = "lin") -> None:
    """The plan tests' steps on a layer with `bias` (of `width`) and a
    Linear (`linear`, an attribute name) whose weight it reads: the bias
    replaced, the Linear's weight parametrized and back
    (`_parametrization_steps`), then `_dtype_and_flow_steps` and the flow
    back."""
    both(lambda m: setattr(m, "bias", torch.nn.Parameter(
        torch.linspace(-1, 1, width, dtype=torch.float64))))
    check("bias replaced", planned=False)
    check("and planned", planned=True)
    _parametrization_steps(check, both, linear)
    _dtype_and_flow_steps(check, both)
    both(lambda m: setattr(m, "flow", "source_to_target"))


def _graph_steps(check, edge_index: torch.Tensor, loop_free: torch.Tensor) -> None:
    """The graph steps of the plan tests of layers whose graph is derived
    on every call (self-loops added or folded): the first call and the
    planned second, a graph without self-loops and one with them again, no
    edges, no nodes, a new graph and that graph written in place."""
    check("first call", planned=False)
    check("second call", planned=True)
    check("a graph without self-loops", planned=True, ei=loop_free)
    check("with them again", planned=True)
    empty = torch.zeros(2, 0, dtype=torch.long)
    check("no edges", planned=True, ei=empty)
    check("no nodes", planned=True, ei=empty, x_in=features(0, torch.float64))
    changed = edge_index.clone()
    check("a new graph", planned=True, ei=changed)
    changed[1, 0] = 6  # (PyTorch's version counter sees it)
    check("that graph written in place", planned=True, ei=changed)


def _attention_weights_steps(check, ours, pyg, x, edge_index, full, weights=True):
    """Attention weights asked for: the full path (`full` records it), which
    drops the plan; the outputs (and, with `weights`, the weights) PyG's;
    the next call decides again, the one after is planned."""
    full.clear()
    got, want = ours(x, edge_index, return_attention_weights=True), \
        pyg(x, edge_index, return_attention_weights=True)
    assert full
    torch.testing.assert_close(got[0], want[0], **tol(torch.float64))
    if weights:
        torch.testing.assert_close(got[1][1], want[1][1], **tol(torch.float64))
    check("weights not asked: decided again", planned=False)
    check("and planned", planned=True)


def _dropout_steps(check, both, monkeypatch, p: float, mask, pyg_mask) -> None:
    """Training with attention dropout: the same mask on both sides (ours
    over the layer's edges, `mask`; PyG's over its own, `pyg_mask`), drawn on
    the planned call too; none in eval mode."""
    drawn = []

    def our_mask(shape, prob, dtype, device):
        assert tuple(shape) == tuple(mask.shape) and prob == p
        drawn.append(1)
        return mask.to(dtype)

    def pyg_dropout(input, p=0.5, training=True, inplace=False):
        return input * pyg_mask if training else input

    from gnnc.nn import _common
    monkeypatch.setattr(_common, "attention_dropout_mask", our_mask)
    monkeypatch.setattr(torch.nn.functional, "dropout", pyg_dropout)
    both(lambda m: (setattr(m, "dropout", p), m.train()))
    check("attention dropout", planned=False)
    check("and planned", planned=True)
    assert len(drawn) == 2
    both(lambda m: m.eval())
    check("eval mode: no dropout", planned=True)
    assert len(drawn) == 2


def _full_path_probe(monkeypatch):
    """(edge_index, n, a loop-free graph of n nodes, full): the plan tests'
    graphs, and the list a probe on the full path's input checks
    (`_common.check_inputs`) appends to on every call that does not take
    the plan."""
    from gnnc.nn import _common
    edge_index, n = tiny_graph()
    loop_free, _ = loop_free_graph(n=n, e=20)
    full = []
    real = _common.check_inputs
    monkeypatch.setattr(_common, "check_inputs", lambda *a: full.append(1) or real(*a))
    return edge_index, n, loop_free, full


def test_gcn_plans_follow_every_change_to_the_layer_and_its_inputs(monkeypatch):
    """GCNConv's later calls take the function its last full call decided
    (conv._GcnPlan) unless something it read changed; the graph (its
    self-loops added or folded) is derived from the graph's contents on
    every call. Each step changes one thing on both libraries' layers (or
    the inputs) and compares output and gradients with PyG's in float64,
    and whether the call took the plan (no second check of the inputs)."""
    edge_index, n, loop_free, full = _full_path_probe(monkeypatch)
    ours, pyg = make(("gcn", "GCNConv", (IN, OUT), {}), torch.float64)

    def both(f):
        f(ours), f(pyg)

    def check(step, planned, dtype=torch.float64, ei=edge_index, weight=None,
              x_in=None):
        _plan_step(step, planned, full, ours, pyg,
                   features(n, dtype) if x_in is None else x_in,
                   (ei,) if weight is None else (ei, weight))

    _graph_steps(check, edge_index, loop_free)
    with torch.no_grad():
        both(lambda m: m.lin.weight.add_(0.5))
    check("weights written in place", planned=True)
    torch.manual_seed(3)
    w = torch.rand(edge_index.size(1), dtype=torch.float64)
    check("edge weights", planned=False, weight=w)
    check("edge weights again: planned", planned=True, weight=w)
    check("other weights (a new tensor)", planned=True, weight=w.flip(0).contiguous())
    # Weights of another dtype (float32: PyG normalises them in float32, so
    # its result is not float64's): the full path, then a plan for them.
    for planned in (False, True):
        full.clear()
        ours(features(n, torch.float64), edge_index, w.float())
        assert (not full) == planned
    check("an [E, 1] column: the full path", planned=False, weight=w.view(-1, 1))
    both(lambda m: setattr(m, "improved", True))
    check("improved, weighted", planned=False, weight=w)
    check("and planned", planned=True, weight=w)
    both(lambda m: setattr(m, "improved", False))
    check("a graph without self-loops, weighted", planned=False, ei=loop_free,
          weight=torch.rand(loop_free.size(1), dtype=torch.float64))
    check("and planned", planned=True, ei=loop_free,
          weight=torch.rand(loop_free.size(1), dtype=torch.float64))
    # The weights' gradient through a planned call: PyG's.
    w1 = w.clone().requires_grad_()
    w2 = w.clone().requires_grad_()
    x = features(n, torch.float64)
    full.clear()
    out1, out2 = ours(x, edge_index, w1), pyg(x, edge_index, w2)
    assert not full
    out1.square().sum().backward()
    out2.square().sum().backward()
    torch.testing.assert_close(w1.grad, w2.grad, **tol(torch.float64))
    ours.zero_grad(set_to_none=True), pyg.zero_grad(set_to_none=True)
    with pytest.raises(ValueError, match="expected edge_weight of shape"):
        ours(x, edge_index, w[1:])
    check("none again: decided again", planned=False)
    check("and planned", planned=True)
    handle = ours.lin.register_forward_hook(lambda *a: None)
    with pytest.raises(NotImplementedError, match="'lin'.*hook"):
        ours(features(n, torch.float64), edge_index)
    handle.remove()
    check("hook removed", planned=True)
    _linear_replaced(check, ours, pyg, "lin")
    _bias_and_lin_steps(check, both, OUT)
    both(lambda m: (setattr(m, "normalize", False), setattr(m, "add_self_loops", False)))
    check("not normalised", planned=False)
    check("and planned", planned=True)
    both(lambda m: (setattr(m, "normalize", True), setattr(m, "add_self_loops", True)))
    check("normalised again", planned=False)
    both(lambda m: setattr(m, "cached", True))
    check("cached", planned=False)
    check("cached: the first graph's result for another", planned=True, ei=loop_free)
    both(lambda m: setattr(m, "_cached_edge_index", None))
    check("the cache emptied", planned=False, ei=loop_free)
    check("and planned", planned=True, ei=loop_free)
    both(lambda m: setattr(m, "cached", False))
    _copies_and_bad_inputs(ours, lambda m: m.lin.weight, features(n, torch.float64),
                           edge_index, n)
    with pytest.raises(TypeError, match="x is torch.float32 but"):
        ours(features(n, torch.float32), edge_index)
    # A lazy layer: sized on its first call, planned on the next.
    lazy = gnn.GCNConv(-1, OUT).double()
    x = features(n, torch.float64)
    first = lazy(x, edge_index)
    full.clear()
    torch.testing.assert_close(lazy(x, edge_index), first, rtol=0, atol=0)
    assert not full and lazy.lin.weight.shape == (OUT, IN)


def test_gat_plans_follow_every_change_to_the_layer_and_its_inputs(monkeypatch):
    """GATConv's later calls on one graph take the function its last full
    call decided (attention._GatPlan) unless something it read changed; the
    graph with its self-loops is derived from the graph's contents and the
    attention dropout's mask drawn on every call. Each step changes one
    thing on both libraries' layers (or the inputs) and compares output and
    gradients with PyG's in float64, and whether the call took the plan (no
    second check of the inputs)."""
    edge_index, n, loop_free, full = _full_path_probe(monkeypatch)
    ours, pyg = make(("gat", "GATConv", (IN, OUT), dict(heads=2)), torch.float64)

    def both(f):
        f(ours), f(pyg)

    def check(step, planned, dtype=torch.float64, ei=edge_index, extra=(), x_in=None):
        _plan_step(step, planned, full, ours, pyg,
                   features(n, dtype) if x_in is None else x_in, (ei, *extra))

    _graph_steps(check, edge_index, loop_free)
    check("edge features without edge_dim (unused)", planned=True,
          extra=(torch.randn(edge_index.size(1), 3, dtype=torch.float64),))
    with torch.no_grad():
        both(lambda m: m.lin.weight.add_(0.5))
        both(lambda m: m.att_src.mul_(-2))
    check("weights written in place", planned=True)
    handle = ours.lin.register_forward_hook(lambda *a: None)
    with pytest.raises(NotImplementedError, match="'lin'.*hook"):
        ours(features(n, torch.float64), edge_index)
    handle.remove()
    check("hook removed", planned=True)
    torch.manual_seed(4)
    att = torch.randn(1, 2, OUT, dtype=torch.float64)
    both(lambda m: setattr(m, "att_dst", torch.nn.Parameter(att.clone())))
    check("att_dst replaced", planned=False)
    check("and planned", planned=True)
    _linear_replaced(check, ours, pyg, "lin")
    _bias_and_lin_steps(check, both, 2 * OUT)
    _option_steps(check, both, [("negative_slope", 0.05, "another negative slope"),
                                ("add_self_loops", False, "no self-loops added")])
    both(lambda m: setattr(m, "add_self_loops", True))
    _attention_weights_steps(check, ours, pyg, features(n, torch.float64), edge_index, full)
    # Training with attention dropout: the same mask on both sides, drawn
    # on the planned call too.
    p, e = 0.4, edge_index.size(1) + n
    mask = (torch.rand(e, 2, generator=torch.Generator().manual_seed(8)) > p).double() / (1 - p)
    keep = torch.ones(e, dtype=torch.bool)
    keep[:edge_index.size(1)] = edge_index[0] != edge_index[1]
    _dropout_steps(check, both, monkeypatch, p, mask, mask[keep])
    # A residual layer: the projection of x added in PyTorch after the plan.
    res, res_pyg = make(("gat", "GATConv", (IN, OUT), dict(heads=2, residual=True)),
                        torch.float64)
    ours, pyg = res, res_pyg
    check("residual: first call", planned=False)
    check("residual: planned", planned=True)
    _copies_and_bad_inputs(ours, lambda m: m.lin.weight, features(n, torch.float64),
                           edge_index, n)


def _copies_and_bad_inputs(ours, weight, x, edge_index, n: int) -> None:
    """The plan tests' last steps on a layer called as `ours(x,
    edge_index)`: a deep copy and a pickled one keep no plan and read their
    own weights (`weight(copy)` scaled there); a planned layer refuses bad
    inputs as on its first call."""
    for clone in (copy.deepcopy(ours), _roundtrip(ours)):
        assert clone.__dict__.get("_gnnc_plan") is None
        with torch.no_grad():
            weight(clone).mul_(2)
        assert not torch.allclose(clone(x, edge_index), ours(x, edge_index))
    ours(x, edge_index)
    assert ours.__dict__.get("_gnnc_plan") is not None
    with pytest.raises(ValueError, match=f"expected x with {IN} channels"):
        ours(features(n, torch.float64, channels=IN + 1), edge_index)
    with pytest.raises(TypeError, match="edge_index of dtype int64"):
        ours(x, edge_index.double())
    with pytest.raises(ValueError, match="outside \\[0, 2\\) for a graph of 2 nodes"):
        ours(features(2, torch.float64), edge_index)


def _roundtrip(module):
    import io
    buf = io.BytesIO()
    torch.save(module, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=False)


def test_gatv2_plans_follow_every_change_to_the_layer_and_its_inputs(monkeypatch):
    """GATv2Conv's later calls on one graph take the function its last full
    call decided (attention._Gatv2Plan) unless something it read changed,
    with and without share_weights; edge features without edge_dim are
    still refused. Each step compares output and gradients with PyG's in
    float64, and whether the call took the plan."""
    edge_index, n, loop_free, full = _full_path_probe(monkeypatch)
    ours, pyg = make(("gatv2", "GATv2Conv", (IN, OUT), dict(heads=2)), torch.float64)

    def both(f):
        f(ours), f(pyg)

    def check(step, planned, dtype=torch.float64, ei=edge_index, x_in=None):
        _plan_step(step, planned, full, ours, pyg,
                   features(n, dtype) if x_in is None else x_in, (ei,))

    _graph_steps(check, edge_index, loop_free)
    with torch.no_grad():
        both(lambda m: m.lin_l.weight.add_(0.5))
        both(lambda m: m.lin_r.bias.mul_(-3))
        both(lambda m: m.att.mul_(2))
    check("weights written in place", planned=True)
    x = features(n, torch.float64)
    with pytest.raises(ValueError, match="edge_attr needs a layer built with edge_dim"):
        ours(x, edge_index, torch.randn(edge_index.size(1), 3, dtype=torch.float64))
    for attr in ("lin_l", "lin_r"):
        handle = getattr(ours, attr).register_forward_hook(lambda *a: None)
        with pytest.raises(NotImplementedError, match=f"'{attr}'.*hook"):
            ours(x, edge_index)
        handle.remove()
        check(f"hook on {attr} removed", planned=True)
    both(lambda m: setattr(m, "att", torch.nn.Parameter(
        torch.randn(1, 2, OUT, dtype=torch.float64, generator=torch.Generator().manual_seed(3)))))
    check("att replaced", planned=False)
    check("and planned", planned=True)
    _linear_replaced(check, ours, pyg, "lin_r")
    _bias_and_lin_steps(check, both, 2 * OUT, "lin_r")
    _option_steps(check, both, [("negative_slope", 0.3, "another negative slope"),
                                ("add_self_loops", False, "no self-loops added")])
    _attention_weights_steps(check, ours, pyg, x, edge_index, full, weights=False)
    for kw in (dict(share_weights=True), dict(residual=True, bias=False)):
        ours, pyg = make(("gatv2", "GATv2Conv", (IN, OUT), dict(heads=2, **kw)),
                         torch.float64)
        check(f"{kw}: first call", planned=False)
        check(f"{kw}: planned", planned=True)
    _copies_and_bad_inputs(ours, lambda m: m.lin_l.weight, x, edge_index, n)


def test_sage_plans_follow_every_change_to_the_layer_and_its_inputs(monkeypatch):
    """SAGEConv's later calls on one graph take the function its last full
    call decided (conv._SagePlan) unless something it read changed. Each
    step changes one thing on both libraries' layers (or the inputs) and
    compares output and gradients with PyG's in float64, and whether the
    call took the plan (no second check of the inputs)."""
    edge_index, n, loop_free, full = _full_path_probe(monkeypatch)
    # (OUT < IN: mean and sum project before aggregating, max after)
    ours, pyg = make(("sage", "SAGEConv", (IN, OUT), {}), torch.float64)

    def both(f):
        f(ours), f(pyg)

    def check(step, planned, dtype=torch.float64, ei=edge_index, size=None, x_in=None):
        _plan_step(step, planned, full, ours, pyg,
                   features(n, dtype) if x_in is None else x_in,
                   (ei,) if size is None else (ei, size))

    _graph_steps(check, edge_index, loop_free)
    with torch.no_grad():
        both(lambda m: m.lin_l.weight.add_(0.5))
        both(lambda m: m.lin_r.weight.mul_(-1))
    check("weights written in place", planned=True)
    both(lambda m: setattr(m.lin_l, "bias", torch.nn.Parameter(
        torch.linspace(-1, 1, OUT, dtype=torch.float64))))
    check("lin_l's bias replaced (read as it is)", planned=True)
    check("a size given", planned=False, size=(n, n))
    check("none again: the plan still stands", planned=True)
    for attr in ("lin_l", "lin_r"):
        handle = getattr(ours, attr).register_forward_hook(lambda *a: None)
        with pytest.raises(NotImplementedError, match=f"'{attr}'.*hook"):
            ours(features(n, torch.float64), edge_index)
        handle.remove()
        check(f"hook on {attr} removed", planned=True)
    _parametrization_steps(check, both, "lin_r")
    _dtype_and_flow_steps(check, both)
    both(lambda m: setattr(m, "flow", "source_to_target"))
    _option_steps(check, both, [("normalize", True, "normalised"),
                                ("root_weight", False, "no root term")])
    both(lambda m: setattr(m, "root_weight", True))
    # A sparse adjacency takes the full path and drops the plan.
    x = features(n, torch.float64)
    adj = torch.sparse_coo_tensor(edge_index.flip(0), torch.ones(edge_index.size(1),
                                                                 dtype=torch.float64),
                                  (n, n))
    torch.testing.assert_close(ours(x, adj), pyg(x, adj), **tol(torch.float64))
    assert ours.__dict__.get("_gnnc_plan") is None
    check("an edge_index again: decided again", planned=False)
    check("and planned", planned=True)
    for aggr in ("max", "sum", "min"):  # (PyG reads aggr when it is built)
        ours, pyg = make(("sage", "SAGEConv", (IN, OUT), dict(aggr=aggr)), torch.float64)
        check(f"aggr {aggr}", planned=False)
        check("and planned", planned=True)
    _copies_and_bad_inputs(ours, lambda m: m.lin_l.weight, features(n, torch.float64),
                           edge_index, n)


def test_transformer_plans_follow_every_change_to_the_layer_and_its_inputs(monkeypatch):
    """TransformerConv's later calls on one graph take the function its
    last full call decided (attention._TransformerPlan) unless something it
    read changed, with the skip in the function (concat, no beta) or added
    in PyTorch (beta, the heads averaged, no root weight); edge features and
    attention weights take the full path, and the attention dropout's mask
    is drawn on every call. Each step compares output and gradients with
    PyG's in float64, and whether the call took the plan."""
    edge_index, n, loop_free, full = _full_path_probe(monkeypatch)
    ours, pyg = make(("transformer", "TransformerConv", (IN, OUT), dict(heads=2)),
                     torch.float64)

    def both(f):
        f(ours), f(pyg)

    def check(step, planned, dtype=torch.float64, ei=edge_index, x_in=None):
        _plan_step(step, planned, full, ours, pyg,
                   features(n, dtype) if x_in is None else x_in, (ei,))

    check("first call", planned=False)
    check("second call", planned=True)
    check("another graph", planned=True, ei=loop_free)
    empty = torch.zeros(2, 0, dtype=torch.long)
    check("no edges", planned=True, ei=empty)
    check("no nodes", planned=True, ei=empty, x_in=features(0, torch.float64))
    changed = edge_index.clone()
    check("a new graph", planned=True, ei=changed)
    changed[1, 0] = 6  # (PyTorch's version counter sees it)
    check("that graph written in place", planned=True, ei=changed)
    with torch.no_grad():
        both(lambda m: m.lin_query.weight.add_(0.5))
        both(lambda m: m.lin_skip.bias.mul_(-3))
    check("weights written in place", planned=True)
    x = features(n, torch.float64)
    for attr in ("lin_query", "lin_key", "lin_value", "lin_skip"):
        handle = getattr(ours, attr).register_forward_hook(lambda *a: None)
        with pytest.raises(NotImplementedError, match=f"'{attr}'.*hook"):
            ours(x, edge_index)
        handle.remove()
        check(f"hook on {attr} removed", planned=True)
    with pytest.raises(NotImplementedError, match="edge_attr without edge_dim"):
        ours(x, edge_index, torch.randn(edge_index.size(1), 3, dtype=torch.float64))
    _linear_replaced(check, ours, pyg, "lin_value")
    _linear_replaced(check, ours, pyg, "lin_skip")
    _parametrization_steps(check, both, "lin_key")
    _dtype_and_flow_steps(check, both)
    both(lambda m: setattr(m, "flow", "source_to_target"))
    _option_steps(check, both, [("root_weight", False, "no root weight"),
                                ("root_weight", True, "the root weight again")])
    _attention_weights_steps(check, ours, pyg, x, edge_index, full)
    # Training with attention dropout: the same mask on both sides, drawn
    # on the planned call too.
    p, e = 0.4, edge_index.size(1)
    mask = (torch.rand(e, 2, generator=torch.Generator().manual_seed(8)) > p).double() / (1 - p)
    _dropout_steps(check, both, monkeypatch, p, mask, mask)
    monkeypatch.undo()
    edge_index, n, loop_free, full = _full_path_probe(monkeypatch)
    for kw in (dict(beta=True), dict(concat=False), dict(root_weight=False, bias=False)):
        ours, pyg = make(("transformer", "TransformerConv", (IN, OUT), dict(heads=2, **kw)),
                         torch.float64)
        check(f"{kw}: first call", planned=False)
        check(f"{kw}: planned", planned=True)
        if kw.get("beta"):
            _linear_replaced(check, ours, pyg, "lin_beta")
    _copies_and_bad_inputs(ours, lambda m: m.lin_query.weight, x, edge_index, n)


@pytest.mark.parametrize("learnable", [True, False])
def test_agnn_plans_follow_every_change_to_the_layer_and_its_inputs(learnable, monkeypatch):
    """AGNNConv's later calls take the function its last full call decided
    (conv._AgnnPlan) unless something it read changed; the graph with its
    self-loops is derived from the graph's contents on every call. `beta`
    a parameter or (requires_grad=False) a buffer. Each step compares
    output and gradients with PyG's in float64, and whether the call took
    the plan."""
    edge_index, n, loop_free, full = _full_path_probe(monkeypatch)
    ours, pyg = make(("agnn", "AGNNConv", (), dict(requires_grad=learnable)), torch.float64)

    def both(f):
        f(ours), f(pyg)

    def check(step, planned, dtype=torch.float64, ei=edge_index, x_in=None):
        _plan_step(step, planned, full, ours, pyg,
                   features(n, dtype) if x_in is None else x_in, (ei,))

    _graph_steps(check, edge_index, loop_free)
    check("wider features", planned=False, x_in=features(n, torch.float64, channels=IN + 2))
    check("and planned", planned=True, x_in=features(n, torch.float64, channels=IN + 2))
    check("the width of then", planned=False)
    check("and planned", planned=True)
    with torch.no_grad():
        both(lambda m: m.beta.fill_(0.7))
    check("beta written in place", planned=True)
    value = torch.tensor([1.3], dtype=torch.float64)
    if learnable:
        both(lambda m: setattr(m, "beta", torch.nn.Parameter(value.clone())))
    else:
        both(lambda m: m.register_buffer("beta", value.clone()))
    check("beta replaced", planned=False)
    check("and planned", planned=True)
    _dtype_and_flow_steps(check, both)
    both(lambda m: setattr(m, "flow", "source_to_target"))
    _option_steps(check, both, [("add_self_loops", False, "no self-loops added"),
                                ("add_self_loops", True, "self-loops again")])
    handle = ours.register_forward_hook(lambda *a: None)
    check("a hook on the layer (its own call: planned)", planned=True)
    handle.remove()
    x = features(n, torch.float64)
    for clone in (copy.deepcopy(ours), _roundtrip(ours)):
        assert clone.__dict__.get("_gnnc_plan") is None
        with torch.no_grad():
            clone.beta.mul_(2)
        assert not torch.allclose(clone(x, edge_index), ours(x, edge_index))
    ours(x, edge_index)
    assert ours.__dict__.get("_gnnc_plan") is not None
    with pytest.raises(TypeError, match="edge_index of dtype int64"):
        ours(x, edge_index.double())
    with pytest.raises(ValueError, match="outside \\[0, 2\\) for a graph of 2 nodes"):
        ours(features(2, torch.float64), edge_index)


@pytest.mark.parametrize("kind", ["gine", "gcn", "gat", "sage"])
def test_a_plan_runs_the_function_for_what_needs_a_gradient(kind):
    """A planned call keeps the function it chose per configuration and per
    which tensors need a gradient (_Plan._call): calls alternating x with and
    without requires_grad, the parameters frozen and thawed, and no_grad,
    each taking the plan, run the variant for that call (no gradient work
    for what needs none, gnnc.explain's record of it), with PyG's outputs and
    gradients."""
    edge_index, n = tiny_graph()
    e = edge_index.size(1)
    cases = {"gine": ("GINEConv", (), dict(nn=lambda: mlp(IN, OUT), train_eps=True,
                                           edge_dim=3)),
             "gcn": ("GCNConv", (IN, OUT), {}), "gat": ("GATConv", (IN, OUT), dict(heads=2)),
             "sage": ("SAGEConv", (IN, OUT), {})}
    cls, args, kw = cases[kind]
    ours, pyg = make((kind, cls, args, kw), torch.float64)
    extra = (torch.randn(e, 3, dtype=torch.float64),) if kind == "gine" else ()
    t = tol(torch.float64)

    def call(x_grad: bool, params: bool, grad_mode: bool = True):
        for m in (ours, pyg):
            for p in m.parameters():
                p.requires_grad_(params)
                p.grad = None
        x1 = features(n, torch.float64).requires_grad_(x_grad)
        x2 = x1.detach().clone().requires_grad_(x_grad)
        with torch.set_grad_enabled(grad_mode):
            out1, out2 = ours(x1, edge_index, *extra), pyg(x2, edge_index, *extra)
        torch.testing.assert_close(out1, out2, **t)
        ran = ours.__dict__["_gnnc_ran"]
        trains = grad_mode and (x_grad or params)
        assert out1.requires_grad == trains
        if trains:
            out1.square().sum().backward()
            out2.square().sum().backward()
            assert (x1.grad is not None) == x_grad
            if x_grad:
                torch.testing.assert_close(x1.grad, x2.grad, **t)
            theirs = dict(pyg.named_parameters())
            for name, p in ours.named_parameters():
                assert (p.grad is not None) == params, name
                if params:
                    torch.testing.assert_close(p.grad, theirs[name].grad, **t, msg=name)
        return ran

    call(True, True)  # (the full path: the plan made)
    plan = ours.__dict__["_gnnc_plan"]
    seen = {}
    for step in [(True, True), (False, True), (True, True), (True, False), (False, False),
                 (True, True, False), (False, True), (True, True)] * 2:
        ran = call(*step)
        assert ours.__dict__.get("_gnnc_plan") is plan, step  # (planned)
        # The same choice for the same call, and x's gradient work only
        # where x needs one: a frozen x is left out of the function's
        # gradients (its key names it), a trainable one is not.
        assert seen.setdefault(step, ran) == ran, step
        x_grad, params, *mode = step
        if (mode == [] or mode[0]) and params:
            assert (0 in (ran[2] if len(ran) > 2 else ())) == (not x_grad), (step, ran)
    assert len(set(seen.values())) >= 3
