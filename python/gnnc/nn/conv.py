"""GCN, GraphSAGE, GIN and AGNN: drop-in replacements of PyG's layers whose
graph part runs as compiled `gnn` functions (see `_ir.py`)."""

from typing import Callable, Optional

import torch
import torch.nn.functional as F
from torch import Tensor

from gnnc import _core

from . import _common
from ._common import Linear
from ._plan import _MISSING, _Plan, _global_hooks, _observed


def check_edge_weight(layer: str, edge_weight, edge_index: Tensor, x: Tensor) -> Tensor:
    """GCN's `edge_weight`: one weight per edge, on x's device, of a
    floating dtype (PyG's messages are promoted with it; under autocast:
    one it casts, _common.promotes), dense. Returns it as [E]: PyG takes an
    [E, 1] column too (a data set's one-channel `edge_attr`), with the same
    result."""
    if isinstance(edge_weight, Tensor):
        _common.check_dense(layer, "edge_weight", edge_weight)
        if edge_weight.dim() == 2 and edge_weight.size(1) == 1:
            edge_weight = edge_weight.reshape(-1)
    if not isinstance(edge_weight, Tensor) or edge_weight.dim() != 1 or \
            edge_weight.size(0) != edge_index.size(1):
        got = (f"shape {list(edge_weight.shape)}" if isinstance(edge_weight, Tensor)
               else type(edge_weight).__name__)
        raise ValueError(f"{layer}: expected edge_weight of shape "
                         f"[{edge_index.size(1)}] (one per edge, or [{edge_index.size(1)}, 1]), "
                         f"got {got}")
    if edge_weight.device != x.device:
        raise TypeError(f"{layer}: edge_weight must be on x's device ({x.device}), "
                        f"got {edge_weight.device}")
    if not _common.promotes(edge_weight.dtype, x.dtype, x.device):
        what = ("x's dtype or one torch.autocast casts" if
                _common.autocast_dtype(x.device) is not None else "a floating dtype")
        raise TypeError(f"{layer}: edge_weight must have {what} (x is {x.dtype}), "
                        f"got {edge_weight.dtype}")
    return edge_weight


def remaining_self_loop_weights(graph: Tensor, keep: Optional[Tensor],
                                edge_weight: Tensor, num_nodes: int,
                                improved: bool) -> Tensor:
    """PyG's add_remaining_self_loops on the weights of `graph` (the input's
    E edges, then one self-loop per node; `keep` 0 on the input's own loops,
    None when it has none): a node's own self-loop keeps its weight, the
    others get 2 (improved) or 1; the input's loops are dropped (weight 0)."""
    # Every tensor here is in edge_weight's dtype: autocast has nothing to
    # cast, and its promotion of index_put/cat fails on a float16 weight
    # under a bfloat16 autocast ("Unexpected floating ScalarType"), where
    # PyG's add_remaining_self_loops runs. (Outside autocast, and outside
    # tracing, no context: entering and leaving one cost some 10 us a call.)
    if not _common._any_autocast() and not torch.compiler.is_compiling():
        return _remaining_self_loop_weights(graph, keep, edge_weight, num_nodes, improved)
    with torch.autocast(edge_weight.device.type, enabled=False):
        return _remaining_self_loop_weights(graph, keep, edge_weight, num_nodes, improved)


def _remaining_self_loop_weights(graph: Tensor, keep: Optional[Tensor],
                                 edge_weight: Tensor, num_nodes: int,
                                 improved: bool) -> Tensor:
    """remaining_self_loop_weights' ops (autocast off)."""
    n, e = num_nodes, edge_weight.size(0)
    fill = 2.0 if improved else 1.0
    if keep is None:
        return torch.cat([edge_weight, edge_weight.new_full((n,), fill)])
    is_loop = keep[:e] == 0
    # A node's own self-loop keeps its weight; of several loops on one node
    # the last one's, as PyG's index assignment gives on the CPU. (An
    # index_put with the node repeated left the choice to the device: on
    # CUDA another loop's weight won, a wrong result against PyG's.) The
    # last loop per node is the largest edge position (slot n: no loop).
    slot = torch.where(is_loop, graph[0, :e].long(), n)
    device = edge_weight.device
    last = torch.full((n + 1,), -1, dtype=torch.long, device=device)
    last = last.scatter_reduce(0, slot, torch.arange(e, device=device), "amax")[:n]
    # (Read from the weights with the fill after them, position e: a node
    # without a loop reads it, and no index is out of range when E = 0,
    # which traced code, always masked, meets.)
    source = torch.cat([edge_weight, edge_weight.new_full((1,), fill)])
    loop_w = source[torch.where(last >= 0, last, e)]
    if torch.is_grad_enabled() and edge_weight.requires_grad:
        # PyG's gradient: its index assignment's backward gives every loop
        # of a node the gradient of that node's loop weight (the loops that
        # lost too), so the value above without its own gradient, plus a
        # zero whose gradient is the assignment's (an index_put, whose
        # forward value, the device's choice, is not used).
        spread = edge_weight.new_zeros(n + 1).index_put((slot,), edge_weight)[:n]
        held = spread.detach()
        loop_w = loop_w.detach() + torch.where(held.isfinite(), spread - held, 0.0)
    return torch.cat([torch.where(is_loop, 0.0, edge_weight), loop_w])


def gcn_graph(conv, edge_index: Tensor, num_nodes: int, dtype: torch.dtype,
              edge_weight: Optional[Tensor]):
    """The graph and edge tensor of `_ir.gcn_model` for GCNConv `conv`'s
    options on `edge_index` (already flipped for `flow`): (graph, weights,
    w, fold), `weights` the template's edge-tensor kind ("": none, "mask": 0
    on the input's own self-loops, or "weight": edge weights,
    differentiable; a string, never None, as torch.compile's non-strict
    tracing of the op's call takes no None in its configuration)
    and `w` that tensor, `fold`: the self-loops folded into the formula
    rather than the graph. An unweighted graph without self-loops runs on a
    private copy of itself with the loops folded (E edges, not E + N); one
    with self-loops or weights on the graph with a loop per node added, the
    input's own loops masked or weighted as PyG's
    add_remaining_self_loops."""
    n = num_nodes
    if conv.normalize and conv.add_self_loops:
        if edge_weight is None and not (torch.compiler.is_compiling() or
                                        edge_index.is_meta):
            ei, keep, fold = _folded_graph(edge_index, n, dtype)
            return ei, ("mask" if keep is not None else ""), keep, fold
        ei, keep = _common.with_self_loops(edge_index, n, dtype)
        if edge_weight is None:
            return ei, "mask", keep, False
        return ei, "weight", remaining_self_loop_weights(ei, keep, edge_weight, n,
                                                         conv.improved), False
    if edge_weight is not None:
        return edge_index, "weight", edge_weight.contiguous(), False
    return edge_index, "", None, False


def _folded_graph(edge_index: Tensor, num_nodes: int, dtype: torch.dtype):
    """(graph, keep, fold), cached per `edge_index` (`_common._derived`: the
    input's contents are checked once per call, here). Without self-loops:
    a private copy of `edge_index` (gnnc's graph cache trusts it) and the
    self-loops folded into the formula; with some: the graph with one
    self-loop per node and the mask `keep` of the input's own loops."""
    def build():
        ei = edge_index
        if ei.size(1) and bool((ei[0] == ei[1]).any()):
            aug, keep, _ = _common._with_self_loops(ei, num_nodes, dtype)
            return aug, keep, False
        return _core._private_copy(ei), None, True

    return _common._derived(edge_index, ("gcn_model", num_nodes, dtype), build)


def gcn_run_dtype(dt: torch.dtype, normalize: bool) -> torch.dtype:
    """The dtype GCN's gnn function runs in where its operands are `dt`:
    float32 for float16 with `normalize`, whose range holds neither a hub's
    degree (65,504 at most: a degree of 70,000 gave 0) nor the unscaled sum
    of its neighbours (10,000 features of 10 gave inf), both finite in
    PyG's float32 normalisation (autocast) or its pre-scaled messages
    (`.half()`); the result is rounded to PyG's dtype once. Without
    `normalize` PyG sums the float16 messages as they are, and so does the
    function. bfloat16 has float32's range: it runs as it is."""
    return torch.float32 if dt == torch.float16 and normalize else dt


def gcn_dtype(conv, dt: torch.dtype, x_dtype: torch.dtype,
              edge_weight: Optional[Tensor]) -> torch.dtype:
    """The dtype of PyG's GCNConv `conv` on input of `x_dtype` whose
    projection `lin(x)` is `dt` (under autocast, the autocast dtype): the
    messages are `lin(x)` times the normalised edge weights, of the
    edge_weight's dtype or (gcn_norm's ones) x's, then the bias is added,
    each step promoting."""
    if edge_weight is not None:
        weights = edge_weight.dtype
    else:
        weights = x_dtype if conv.normalize else None
    bias = conv.bias  # (read once: Module.__getattr__)
    return _common.promoted(dt, weights, None if bias is None else bias.dtype)


class GCNConv(torch.nn.Module):
    r"""PyG's `GCNConv` (Kipf & Welling):
    `out = D^-1/2 (A + I) D^-1/2 x W^T + b`.

    Supported: `improved` (as in PyG 2.8 it only changes the result with an
    `edge_weight`), `cached`, `add_self_loops` (PyG's
    `add_remaining_self_loops`: a node's own self-loop keeps its weight),
    `normalize`, `bias`, `flow`, `forward(x, edge_index, edge_weight=None)`
    with a 1-D `edge_weight`, lazy `in_channels=-1`, a sparse adjacency
    `adj_t` whose values are the edge weights (docs/Python-nn.md). Refused
    (`NotImplementedError`): `aggr` other than 'add'. Parameters:
    `lin.weight`, `bias`.
    """

    def __init__(self, in_channels: int, out_channels: int, improved: bool = False,
                 cached: bool = False, add_self_loops: Optional[bool] = None,
                 normalize: bool = True, bias: bool = True, **kwargs):
        super().__init__()
        name = type(self).__name__
        self.flow = _common.check_kwargs(name, kwargs)
        if add_self_loops is None:
            add_self_loops = normalize
        if add_self_loops and not normalize:
            raise ValueError(f"'{name}' does not support adding self-loops to the "
                             f"graph when no on-the-fly normalization is applied")
        self.in_channels = _common.check_channels(name, "in_channels", in_channels)
        self.out_channels = _common.check_channels(name, "out_channels", out_channels)
        self.improved = improved
        self.cached = cached
        self.add_self_loops = add_self_loops
        self.normalize = normalize
        self._cached_edge_index = None
        self.lin = Linear(in_channels, out_channels, bias=False,
                          weight_initializer="glorot")
        _common.optional_bias(self, bias, out_channels)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.lin.reset_parameters()
        _common.zeros(self.bias)
        self._cached_edge_index = None

    @_common.sparse_runs_eagerly
    def forward(self, x: Tensor, edge_index: Tensor,
                edge_weight: Optional[Tensor] = None) -> Tensor:
        plan = _Plan.of(self)
        if plan is not None:
            out = plan.run(self, x, edge_index, edge_weight)
            if out is not None:
                return out
        name = type(self).__name__
        adj = edge_index
        # A sparse adjacency's repeated entries: one edge where PyG adds
        # self-loops (its add_self_loops rebuilds the tensor coalesced, and
        # the loops' weights depend on it), else as its spmm reads them.
        duplicates = "summed" if self.normalize and self.add_self_loops else "spmm"
        # Each parameter read once: a submodule's or parameter's attribute
        # read is Module.__getattr__ (a failed lookup first), some 1 us.
        lin, bias = self.lin, self.bias
        check_folded_linears(name, (("lin", lin, False),))
        weight = lin.weight
        edge_index, values = _common.check_inputs(
            name, x, edge_index, _common.channels(self), weight.dtype, self.flow,
            duplicates)
        if self.in_channels <= 0:
            _common.materialize_lazy(self, x)
            weight = lin.weight
        n = x.size(0)
        if _common.is_sparse(adj):
            if edge_weight is not None:
                raise ValueError(f"{name}: pass the edge weights as the sparse "
                                 f"adjacency's values, not as edge_weight")
            edge_weight = self._adjacency_weights(adj, edge_index, values, x.dtype)
        kept = self._cached_edge_index if self.cached else None
        if kept is not None:
            # PyG's cached=True keeps the first call's normalised graph (the
            # edges and weights given now are not read, as PyG's).
            _check_cached_nodes(name, kept, n)
            edge_index, edge_weight = kept[0], kept[1]
        else:
            if edge_weight is not None:
                edge_weight = check_edge_weight(name, edge_weight, edge_index, x)
            if self.cached:
                # The first call's graph kept: a copy of its edges and
                # weights (a later write to the caller's tensors does not
                # change it; the weights' gradient reaches them at this call
                # only) and its node count (the self-loops and the degrees
                # are this call's).
                edge_index = edge_index.clone()
                self._cached_edge_index = (
                    edge_index,
                    None if edge_weight is None else edge_weight.detach().clone(), n)
        # The whole layer is one gnn function (gcn_model of one layer): the
        # matmul x W^T, the propagation and the bias, so a call is one op
        # forward and one backward, the weight's and bias's gradients
        # included (no linear, matmul backward or bias addition in PyTorch).
        # Under autocast the function runs in the autocast dtype, x, the
        # weight and the bias converted inside it (_common.operand), its
        # result returned in PyG's dtype (_common.returned).
        # Outside autocast an edge_weight of another dtype promotes PyG's
        # messages (a float32 one with a bfloat16 layer: float32): the op
        # runs in that dtype.
        dt = _common.edge_promoted(_common.compute_dtype(x, weight.dtype), edge_weight)
        run = gcn_run_dtype(dt, self.normalize)
        ei, weights, w, fold = gcn_graph(self, _common.flip(edge_index, self.flow), n,
                                         run, edge_weight)
        tensors = [_common.operand(run, x), _common.operand(run, weight)]
        if bias is not None:
            tensors.append(_common.operand(run, bias))
        if w is not None:
            tensors.append(_common.operand(run, w))
        head = ((self.in_channels if self.in_channels > 0 else int(x.size(1)),
                 self.out_channels), _common._DTYPES[run], bias is not None)
        want = gcn_dtype(self, dt, x.dtype, edge_weight) if dt in _common._HALVES else run
        results = _common.returned(run, want)
        if not _common.is_sparse(adj) and (edge_weight is None or not self.cached):
            # (A plan for the next calls: an edge_index, unweighted or, not
            # cached, weighted.)
            _GcnPlan.keep(self, x, run, lin, bias, head, results,
                          None if edge_weight is None else edge_weight.dtype)
        else:
            _Plan.drop(self)
        config = head + (False, weights, self.normalize, fold, False)
        out = _common.propagate(self, "gcn_model", config, ei, n, *tensors, results=results)
        return _common.as_dtype(out, want)

    def _adjacency_weights(self, adj, edge_index: Tensor, values: Optional[Tensor],
                           dtype: torch.dtype) -> Optional[Tensor]:
        """A sparse adjacency's values as edge weights, with PyG's self-loop
        handling of each kind (gcn_norm): a torch.sparse adjacency gets its
        self-loops added and summed with the ones present (a loop weight of
        w + fill), a SparseTensor's diagonal is replaced (fill_diag: fill);
        the edge_index path keeps a node's own loop weight, so those weights
        are given to the input's loops here."""
        if values is None:
            return None
        _common.check_values(type(self).__name__, values, dtype)
        w = values.to(self.lin.weight.dtype)
        if self.normalize and self.add_self_loops:
            fill = 2.0 if self.improved else 1.0
            is_loop = edge_index[0] == edge_index[1]
            loop = w + fill if isinstance(adj, Tensor) else torch.full_like(w, fill)
            w = torch.where(is_loop, loop, w)
        return w.contiguous()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.in_channels}, {self.out_channels})"


_SAGE_AGGR = {"mean": "mean", "max": "max", "min": "min", "sum": "sum", "add": "sum"}


def _aggregate_pair(layer: torch.nn.Module, h: Tensor, aggr: str, dtype: torch.dtype,
                    edge_index: Tensor, sizes: tuple,
                    weights: Optional[Tensor] = None) -> Tensor:
    """`aggr` of the sources' rows `h` [num_src, F] into each destination of
    a bipartite graph of sizes (num_src, num_dst), in `dtype`: SAGE's
    template on the bipartite graph, [num_dst, F] (docs/Python-nn.md). With
    `weights` (message_weights: a torch.sparse adjacency's values) each
    message is weighted first, as PyG's spmm does."""
    if weights is not None:
        return _common.weighted_aggregate(edge_index, sizes, _common.cast(dtype, h), weights,
                                          aggr)
    h = _common.operand(dtype, h)
    return _common.propagate(layer, "sage",
                             (int(h.size(1)), _common._DTYPES[dtype], aggr, True),
                             edge_index, sizes, h)


def sum_terms(terms: list) -> Tensor:
    """The sum of linear terms: `("mm", a, W)` is `a @ W^T`, `("add", t)` is
    `t`, `("bias", b)` is `b`. Terms multiplying the same tensor share one
    matmul (their weights summed), the biases are summed, and each further
    matmul accumulates into the result (`addmm`): no separate additions.
    What a SAGE layer's `lin_l(agg) + lin_r(x)` is, and what
    gnnc.nn.to_hetero's sum of several SAGE layers into one node type is."""
    mms, adds, biases = [], [], []
    # Traced, the terms are not merged (torch.compile cannot take a traced
    # tensor's identity in every PyTorch version): the same sum, unmerged.
    merge = not torch.compiler.is_compiling()
    for term in terms:
        if term[0] == "mm":
            a, w = term[1], term[2]
            k = next((i for i, (b, _) in enumerate(mms) if b is a), None) if merge else None
            if k is None:
                mms.append((a, w))
            else:
                mms[k] = (a, mms[k][1] + w)
        elif term[0] == "add":
            adds.append(term[1])
        else:
            biases.append(term[1])
    bias = None
    for b in biases:
        bias = b if bias is None else bias + b
    out = None
    for a, w in mms:
        if out is None:
            out = F.linear(a, w, bias)
            bias = None
        else:
            out = torch.addmm(out, a, w.t())
    for t in adds:
        out = t if out is None else out + t
    if bias is not None:
        out = out + bias
    return out


class SAGEConv(torch.nn.Module):
    r"""PyG's `SAGEConv` (Hamilton et al.):
    `out_i = W_l aggr_{j -> i} x_j + b + W_r x_i`.

    Supported: `aggr` in 'mean', 'max', 'min', 'sum'/'add' (a node without
    incoming edges aggregates 0, as in PyG), `normalize`, `root_weight`,
    `project`, `bias`, `flow`, PyG's bipartite form (`(in_src, in_dst)`
    channels, `forward((x_src, x_dst), edge_index, size=(num_src,
    num_dst))`, docs/Python-nn.md). Refused (`NotImplementedError`): other
    aggregations (lists, `Aggregation` modules, 'lstm', ...); lazy
    `in_channels=-1` works except with `project=True` (ValueError, as PyG). Parameters: `lin_l.weight`, `lin_l.bias`, `lin_r.weight`,
    `lin.weight`/`lin.bias` with `project=True`. With max/min, tied
    neighbours share the gradient equally; where the extremum is exactly 0
    PyG's CPU gradient differs (docs/Python-nn.md).
    """

    def __init__(self, in_channels: int, out_channels: int, aggr="mean",
                 normalize: bool = False, root_weight: bool = True,
                 project: bool = False, bias: bool = True, **kwargs):
        super().__init__()
        name = type(self).__name__
        self.flow = _common.check_kwargs(name, kwargs)
        if not isinstance(aggr, str) or aggr not in _SAGE_AGGR:
            _common.refuse(name, f"aggr={aggr!r}",
                           "only 'mean', 'max', 'min', 'sum' and 'add'")
        # PyG's (source, destination) channels: lin_l reads the sources,
        # lin_r the destinations.
        in_src, in_dst = _common.check_channel_pair(name, in_channels)
        self.in_channels = (tuple(in_channels) if isinstance(in_channels, (tuple, list))
                            else in_channels)
        self.out_channels = _common.check_channels(name, "out_channels", out_channels)
        self.aggr = aggr
        self.normalize = normalize
        self.root_weight = root_weight
        self.project = project
        if project:
            if in_src <= 0:
                raise ValueError(f"'{name}' does not support lazy initialization "
                                 f"with `project=True`")
            self.lin = Linear(in_src, in_src, bias=True)
        self.lin_l = Linear(in_src, out_channels, bias=bias)
        if root_weight:
            self.lin_r = Linear(in_dst, out_channels, bias=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.project:
            self.lin.reset_parameters()
        self.lin_l.reset_parameters()
        if self.root_weight:
            self.lin_r.reset_parameters()

    @_common.sparse_runs_eagerly
    def forward(self, x, edge_index: Tensor, size=None) -> Tensor:
        plan = _Plan.of(self)
        out = None if plan is None else plan.run(self, x, edge_index, size)
        if out is None:
            out = sum_terms(self.terms(x, edge_index, size, whole=True))
        if self.normalize:
            out = F.normalize(out, p=2.0, dim=-1)
        return out

    def terms(self, x, edge_index: Tensor, size=None, whole: bool = False) -> list:
        """The layer's output before `normalize` as a list of terms for
        `sum_terms`: on one graph, and with `whole` (the layer's own
        forward) on a bipartite graph, the whole layer's result (one op);
        otherwise on a bipartite graph or with weighted messages the
        aggregation (or, projected first, its result), the root term and
        the bias, which gnnc.nn.to_hetero sums over several layers at once
        (a shared input's matmuls merged)."""
        name = type(self).__name__
        check_folded_linears(name, (("lin_l", self.lin_l, True),
                                    ("lin_r", self.lin_r if self.root_weight else None,
                                     False)))
        if isinstance(x, (tuple, list)) or isinstance(self.in_channels, tuple):
            return self._bipartite(name, x, edge_index, size, whole)
        adj = edge_index
        # (each submodule and parameter read once: Module.__getattr__)
        lin_l = self.lin_l
        weight = lin_l.weight
        edge_index, values = _common.check_inputs(
            name, x, edge_index, _common.channels(self), weight.dtype, self.flow)
        if self.in_channels <= 0:
            _common.materialize_lazy(self, x)
            weight = lin_l.weight
        n = x.size(0)
        _common.check_size(name, size, n)
        ei = _common.flip(edge_index, self.flow)
        src = F.relu(self.lin(x)) if self.project else x
        aggr = _SAGE_AGGR[self.aggr]
        dt = _common.compute_dtype(x, weight.dtype)
        t = _common._DTYPES[dt]
        weights = _common.message_weights(name, adj, values, aggr, dt)
        if weights is not None:
            # PyG's spmm over a torch.sparse adjacency weights the messages.
            if whole:
                _Plan.drop(self)
            agg = _common.weighted_aggregate(ei, n, _common.cast(dt, src), weights, aggr)
            terms = [("mm", agg, weight)]
            return terms + self._root_and_bias(x)
        # The whole layer is one gnn function (_ir.sage_layer): the
        # projections, the aggregation, the root term and the bias, one op
        # forward and one backward, the weights' and bias's gradients
        # included. A linear aggregation (mean, sum) runs after the
        # projection where that moves fewer features over the edges.
        cin, cout = int(src.size(1)), self.out_channels
        project_first = aggr in ("mean", "sum") and cout < cin
        bias, root = lin_l.bias, self.root_weight
        wl = _common.operand(dt, weight)
        tensors = [_common.operand(dt, src), wl]
        if bias is not None:
            tensors.append(_common.operand(dt, bias))
        if root:
            tensors.append(_common.operand(dt, self.lin_r.weight))
        separate = root and self.project
        if separate:
            tensors.append(_common.operand(dt, x))
        if project_first:
            tensors.append(wl)  # (no gradient: PyG's 0 @ W_l^T, _ir.sage_layer)
        config = (cin, cout, t, aggr, bias is not None, root, project_first, separate)
        if whole:
            if not self.project and not _common.is_sparse(adj):
                # (A plan for the next calls: an edge_index, no projection.)
                _SagePlan.keep(self, x, dt, lin_l, self.lin_r if root else None, config)
            else:
                _Plan.drop(self)
        return [("add", _common.propagate(self, "sage_layer", config, ei, n, *tensors))]

    def _root_and_bias(self, x_dst) -> list:
        terms = [("bias", self.lin_l.bias)] if self.lin_l.bias is not None else []
        if self.root_weight and x_dst is not None:
            terms.append(("mm", x_dst, self.lin_r.weight))
        return terms

    def _bipartite(self, name: str, x, edge_index: Tensor, size, whole: bool) -> list:
        """PyG's bipartite SAGE: sources x[0] aggregated into the num_dst
        destinations, x[1] (None: no root term) through lin_r."""
        if whole:
            _Plan.drop(self)
        sides = ([self.lin_l], [self.lin_r] if self.root_weight else [])
        adj = edge_index
        x_src, x_dst, ei, (ns, nd), values = _common.linear_pair_inputs(
            name, x, edge_index, size, sides, self.flow, targets_required=False)
        src = F.relu(self.lin(x_src)) if self.project else x_src
        aggr = _SAGE_AGGR[self.aggr]
        dt = _common.compute_dtype(x_src, self.lin_l.weight.dtype)
        weights = _common.message_weights(name, adj, values, aggr, dt)
        cin, cout = int(src.size(1)), self.out_channels
        # A linear aggregation runs after the projection where that moves
        # fewer features over the edges and projects no more rows than the
        # destinations have.
        project_first = aggr in ("mean", "sum") and cout < cin and ns <= nd
        if weights is not None or not whole:
            # Terms to sum with other layers' (to_hetero), or PyG's spmm
            # over a weighted torch.sparse adjacency.
            if project_first:
                terms = [("add", _aggregate_pair(self, F.linear(src, self.lin_l.weight),
                                                 aggr, dt, ei, (ns, nd), weights))]
            else:
                terms = [("mm", _aggregate_pair(self, src, aggr, dt, ei, (ns, nd), weights),
                          self.lin_l.weight)]
            return terms + self._root_and_bias(x_dst)
        # The whole layer is one gnn function on the bipartite graph
        # (_ir.sage_layer): the sources' aggregation, the destinations' root
        # term, the bias; one op forward and one backward.
        bias = self.lin_l.bias
        root = self.root_weight and x_dst is not None
        t = _common._DTYPES[dt]
        wl = _common.operand(dt, self.lin_l.weight)
        tensors = [_common.operand(dt, src), wl]
        if bias is not None:
            tensors.append(_common.operand(dt, bias))
        if root:
            tensors += [_common.operand(dt, self.lin_r.weight), _common.operand(dt, x_dst)]
        if project_first:
            tensors.append(wl)  # (no gradient: PyG's 0 @ W_l^T, _ir.sage_layer)
        config = (cin, cout, t, aggr, bias is not None, root, project_first, False, True,
                  int(x_dst.size(1)) if root else 0)
        return [("add", _common.propagate(self, "sage_layer", config, ei, (ns, nd), *tensors))]

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.in_channels}, {self.out_channels}, "
                f"aggr={self.aggr})")


def _reset(value) -> None:
    """torch_geometric.nn.inits.reset."""
    if hasattr(value, "reset_parameters"):
        value.reset_parameters()
    else:
        for child in value.children() if hasattr(value, "children") else []:
            _reset(child)


def _gin_eps(module: torch.nn.Module, nn: Callable, eps: float, train_eps: bool) -> None:
    """GIN's and GINE's `nn` and `eps` (a parameter with `train_eps`, else a
    buffer), as PyG names them; reset_parameters fills `eps`."""
    module.nn = nn
    module.initial_eps = eps
    _common.parameter_or_buffer(module, "eps", train_eps, torch.empty(1))


# The classes of PyG's MLP (torch_geometric.nn.models.MLP) and of the copy
# gnnc.nn.GIN builds (models._MLP), by module and name: gnnc does not import
# torch_geometric, and models imports this module.
_MLP_CLASSES = (("torch_geometric.nn.models.mlp", "MLP"), (f"{__package__}.models", "_MLP"))
# gnnc's and PyG's Linear (x W^T + b, the weight [out, in]), by module and name.
_LINEAR_CLASSES = ((Linear.__module__, Linear.__qualname__),
                   ("torch_geometric.nn.dense.linear", "Linear"))


def _is_class(m, classes) -> bool:
    """Whether `m`'s exact class is one of `classes` ((module, name) pairs):
    a subclass may compute something else."""
    return (type(m).__module__, type(m).__qualname__) in classes


def _plain_forward(m) -> bool:
    """Whether `m`'s forward is that of `torch.nn.Linear` or of gnnc's or
    PyG's `Linear`: the nearest class defining it is one of them (a
    parametrized module's class, torch.nn.utils.parametrize's, defines
    none; a subclass with its own forward, a LoRA layer, does)."""
    for cls in type(m).__mro__:
        if "forward" in vars(cls):
            return cls is torch.nn.Linear or \
                (cls.__module__, cls.__qualname__) in _LINEAR_CLASSES
    return False


def check_folded_linears(layer: str, linears, together: bool = False) -> None:
    """`linears`: (attribute name, Linear or None, whether the layer's gnn
    function reads its bias) for the Linears that PyG's layer calls and
    whose weights gnnc's layer reads into its gnn function instead.

    A forward or backward hook on one (a pre-hook that changes the input, a
    hook that changes or records the output), a `forward` set on the
    instance or one of a subclass would then be skipped without a word, so
    it is refused (`NotImplementedError` naming the module). A
    parametrization (torch.nn.utils.parametrize, weight_norm,
    spectral_norm) is fine: the weight read is the parametrized one. Global
    hooks are not looked at (docs/Python-nn.md).

    A bias on a Linear the function reads without one (PyG builds
    GCNConv.lin, GATConv.lin and SAGEConv.lin_r without a bias; a
    torch.nn.Linear set in their place has one by default) would be dropped
    without a word: refused too. With `together`, the Linears whose biases
    the function reads (one flag for the group: GATv2's lin_l and lin_r,
    TransformerConv's projections) must all have one or none, as PyG builds
    them."""
    linears = [(attr, m, reads) for attr, m, reads in linears if m is not None]
    for attr, m, _ in linears:
        if not (_lazy_init_only(m) and _plain_forward(m)):
            raise NotImplementedError(
                f"{layer}: '{attr}' ({type(m).__name__}) has a hook or a forward of its "
                f"own, which gnnc would skip: the layer reads {attr}.weight into its "
                f"compiled function rather than calling {attr} (PyG calls it); hook the "
                f"layer itself, or apply the change to the weight "
                f"(torch.nn.utils.parametrize)")
    read = []
    for attr, m, reads_bias in linears:
        has = m.bias is not None
        if has and not reads_bias:
            raise NotImplementedError(
                f"{layer}: '{attr}' has a bias, which gnnc's {layer} does not add "
                f"(PyG builds {attr} without one and would add it): build {attr} with "
                f"bias=False and use the layer's own bias, or add the term outside "
                f"the layer")
        if reads_bias:
            read.append((attr, has))
    if together and len({has for _, has in read}) > 1:
        have = [a for a, h in read if h]
        lack = [a for a, h in read if not h]
        raise NotImplementedError(
            f"{layer}: {', '.join(have)} {'has' if len(have) == 1 else 'have'} a bias but "
            f"{', '.join(lack)} {'has' if len(lack) == 1 else 'have'} none; gnnc's "
            f"{layer} takes all of them with a bias or all without (as PyG builds "
            f"them)")


def _plain_linear(m, width: int, dtype: torch.dtype) -> Optional[Tensor]:
    """`m`'s weight where `m` is exactly `x W^T + b` on features of `width`
    and `dtype` (None: under autocast, any it casts): a `torch.nn.Linear`,
    or gnnc's or PyG's `Linear` once sized
    (a lazy one sizes itself on its first call, in PyTorch), unobserved;
    else None. (The weight, so that the caller does not read it again:
    Module.__getattr__, some 1 us a read.)"""
    if type(m) is not torch.nn.Linear and not _is_class(m, _LINEAR_CLASSES):
        return None
    w = m.weight
    plain = not _observed(m) and \
        not isinstance(w, torch.nn.parameter.UninitializedParameter) and \
        w.dim() == 2 and w.size(1) == width and \
        (w.dtype == dtype if dtype is not None else w.dtype in _common._AUTOCAST_CAST)
    return w if plain else None


def _plain_relu(act) -> bool:
    """Whether the activation `act` (a module or a function, as PyG's MLP
    holds it) is exactly ReLU."""
    if isinstance(act, torch.nn.Module):
        return type(act) is torch.nn.ReLU and not _observed(act)
    return act is F.relu or act is torch.relu


def _identity(m) -> bool:
    return type(m) is torch.nn.Identity and not _observed(m)


def _sequential_prefix(modules: list, width: int, dtype: torch.dtype):
    """`_leading_mlp` of the modules of a `torch.nn.Sequential` (or of one
    module): the leading linear maps, each with the ReLU module right after
    it, and a function running the modules after them."""
    linears, relus, i = [], [], 0
    while i < len(modules):
        w = _plain_linear(modules[i], width, dtype)
        if w is None:
            break
        relu = i + 1 < len(modules) and type(modules[i + 1]) is torch.nn.ReLU and \
            not _observed(modules[i + 1])
        linears.append(modules[i])
        relus.append(relu)
        width, i = w.size(0), i + 1 + relu
    rest = modules[i:]

    def run(x: Tensor) -> Tensor:
        for m in rest:
            x = m(x)
        return x

    return linears, relus, run


def _mlp_prefix(mlp, width: int, dtype: torch.dtype):
    """`_leading_mlp` of PyG's `MLP` (or gnnc.nn.GIN's copy of it), whose
    forward runs, per layer `i` but a plain last one, `lins[i]`, the
    activation (before the norm with `act_first`, else after it),
    `norms[i]` and `F.dropout(p=dropout[i])`; with `plain_last`, then the
    last Linear and its dropout. The fold takes `lins[i]`, then the
    activation where it is exactly ReLU and comes before the norm or the norm
    is an Identity; it goes on to layer `i + 1` only past an identity: an
    Identity norm, the activation folded (or None), no dropout (p = 0 or eval
    mode). The returned function runs the rest as that forward would (no
    `batch`: GINConv calls `nn(x)`). An MLP of another shape than its class
    builds (norms or dropouts not one per layer): nothing folds."""
    lins, norms, drops = mlp.lins, mlp.norms, mlp.dropout
    loop = len(lins) - 1 if mlp.plain_last else len(lins)
    if len(lins) == 0 or len(norms) != loop or len(drops) != len(lins):
        return None, None, None
    act = mlp.act  # (read once: Module.__getattr__)
    relu = _plain_relu(act)
    linears, relus, i, partial = [], [], 0, False
    while i < loop:
        w = _plain_linear(lins[i], width, dtype)
        if w is None:
            break
        folds_act = relu and (mlp.act_first or _identity(norms[i]))
        linears.append(lins[i])
        relus.append(folds_act)
        width = w.size(0)
        if not ((act is None or folds_act) and _identity(norms[i]) and
                (drops[i] == 0 or not mlp.training)):
            partial = True  # layer i's linear (and activation) folded, not the rest
            break
        i += 1
    last = not partial and i == loop and mlp.plain_last and \
        _plain_linear(lins[-1], width, dtype) is not None
    if last:
        linears.append(lins[-1])
        relus.append(False)
    acted = partial and relus[-1]

    def run(x: Tensor) -> Tensor:
        # MLP.forward from where the fold ends: layer i's norm and dropout
        # (and its activation where not folded) when it ended inside layer
        # i, the layers after it, the last Linear and its dropout.
        for j in range(i, loop):
            if j > i or not partial:
                x = lins[j](x)
            if act is not None and mlp.act_first and not (j == i and acted):
                x = act(x)
            x = norms[j](x, None, None) if mlp.supports_norm_batch else norms[j](x)
            if act is not None and not mlp.act_first and not (j == i and acted):
                x = act(x)
            x = F.dropout(x, p=drops[j], training=mlp.training)
        if mlp.plain_last:
            if not last:
                x = lins[-1](x)
            x = F.dropout(x, p=drops[-1], training=mlp.training)
        return x

    return linears, relus, run


def _leading_mlp(nn, x: Tensor):
    """(linears, relus, rest): the linear maps `nn` starts with, whose first
    takes `x` as it is (its features, its dtype: a mismatch raises in
    PyTorch, as in PyG), each the next one's width; per map, whether a ReLU
    follows it (folded too); and a function running the rest of `nn` on
    what they give, so that `rest(relu?(... lin(x)))` is `nn(x)`. `nn` may
    be a `torch.nn.Sequential` (or one module) of `torch.nn.Linear`s (or
    gnnc's or PyG's `Linear`), each optionally followed by a
    `torch.nn.ReLU`, then anything (`_sequential_prefix`), or PyG's `MLP`
    (or gnnc.nn.GIN's copy of it: `_mlp_prefix`). Nothing may observe or
    replace the calls the fold skips: no hooks on `nn` or on those modules,
    none global, no `forward` set on one of them. No such prefix, or `nn`
    not a module (any callable, as PyG takes): (None, None, None), `nn` runs
    as it is."""
    none = None, None, None
    if not isinstance(nn, torch.nn.Module) or _observed(nn) or _global_hooks():
        return none
    width, dtype = x.size(1), x.dtype
    if dtype in _common._AUTOCAST_CAST and _common.autocasts(x.device, dtype):
        # Under autocast a Linear takes x of any dtype it casts (PyTorch
        # casts both), and so does the function (_common.operand).
        dtype = None
    if _is_class(nn, _MLP_CLASSES):
        linears, relus, rest = _mlp_prefix(nn, width, dtype)
    else:
        modules = list(nn) if type(nn) is torch.nn.Sequential else [nn]
        linears, relus, rest = _sequential_prefix(modules, width, dtype)
    return (linears, relus, rest) if linears else none


def _gin_run(module: torch.nn.Module, template: str, edge_index: Tensor, n: int,
             dt: torch.dtype, tensors: list, extra: tuple = (),
             remember: Optional[tuple] = None) -> Tensor:
    """GIN's or GINE's propagation (`template`, its arguments `tensors`,
    x first; `extra` the template's configuration after the dtype: GINE's
    folded edge projection) followed by `nn`. The linear maps and ReLUs
    `nn` starts with (`_leading_mlp`) join the gnn function
    (`<template>_layer`): one op forward and one backward, the weights' and
    biases' gradients included; the rest of `nn` runs in PyTorch.
    `remember` (the caller's inputs were an edge_index and plain tensors):
    the fold is kept as the layer's plan (_GinPlan) for its next calls, with
    GINE's (lin or None, edge_attr) (GIN: ())."""
    cin, t = int(tensors[0].size(1)), _common._DTYPES[dt]
    nn = module.nn  # (read once: Module.__getattr__)
    # Outside autocast, edge features of another dtype than x make the
    # aggregate (PyG's nn's input) of the promoted dtype `dt`: nn then runs
    # as it is, on that.
    # Under autocast too where a float64 is among them (autocast casts
    # none of them then).
    linears, relus, rest = (_leading_mlp(nn, tensors[0])
                            if _common.autocasts(tensors[0].device, dt) or
                            dt == tensors[0].dtype else (None, None, None))
    if remember is None or linears is None:
        # (A plan is the last full call's decision: none for this one.)
        _Plan.drop(module)
    if linears is None:
        # `nn` gets what PyG's gets: under autocast, the dtype x, the edge
        # features and eps promote to (the op ran in the autocast dtype).
        dtype = _common.promoted(*(a.dtype for a in tensors))
        out = _common.propagate(module, template, (cin, t) + extra, edge_index, n,
                                *_common.operands(dt, *tensors),
                                results=_common.returned(dt, dtype))
        return nn(_common.as_dtype(out, dtype))
    # Each map's weight and bias read once (Module.__getattr__): its
    # layer's shape and its operands (_common.linear_operands' order).
    layers, operands = [], []
    for m, relu in zip(linears, relus):
        w, b = m.weight, m.bias
        layers.append((w.size(0), b is not None, relu))
        operands += (w,) if b is None else (w, b)
    layers = tuple(layers)
    config = (cin, layers, t) + extra
    if template == "gin":
        # Linear up to the first map: projected first where that moves
        # fewer features over the edges.
        config += (layers[0][0] < cin,)
    if remember is not None:
        _GinPlan.keep(module, f"{template}_layer", config, tensors, nn, linears, relus,
                      rest, dt, *remember)
    tensors = tensors + operands
    out = _common.propagate(module, f"{template}_layer", config, edge_index, n,
                            *_common.operands(dt, *tensors))
    return rest(out)


def _mlp_state(mlp) -> Optional[tuple]:
    """What `_mlp_prefix` reads of PyG's `MLP` (or gnnc.nn.GIN's copy of
    it) besides its Linears' weights and the hooks: its layers, norms and
    activation (the same objects), `act_first`, `plain_last`, the dropout
    probabilities, its mode and `supports_norm_batch`; None where one of
    them is not a plain attribute (the fold then is not planned)."""
    d = mlp.__dict__
    modules = d["_modules"]
    lins, norms = modules.get("lins"), modules.get("norms")
    drops = d.get("dropout")
    if type(lins) is not torch.nn.ModuleList or type(norms) is not torch.nn.ModuleList or \
            not isinstance(drops, (list, tuple)):
        return None
    act = modules["act"] if "act" in modules else d.get("act", _MISSING)
    return (tuple(lins._modules.values()), tuple(norms._modules.values()), act,
            d.get("act_first", _MISSING), d.get("plain_last", _MISSING), tuple(drops),
            d["training"], d.get("supports_norm_batch", _MISSING))


class _GinPlan(_Plan):
    """A GIN or GINE layer's plan (`_Plan`): `nn`'s leading linear maps and
    ReLUs, and GINE's `lin`, folded into its gnn function. Besides
    `_Plan`'s checks: GINE's edge_attr a plain dense tensor of the dtype,
    device and width of then, one row per edge; the layer's `nn`, `lin` and
    `eps` the same objects, eps of the same dtype; `nn`'s children the same
    modules (a `torch.nn.Sequential`), or what the fold read of PyG's `MLP`
    as then (`_mlp_state`: gnnc.nn.GIN's layers, and `GINConv(MLP(...))`);
    `lin` and each folded Linear as then; no hook on `nn`, on the modules
    the fold skips, on an MLP's activation or on the norms of its folded
    layers. Made only where the full path folded, with `nn` a
    `torch.nn.Sequential`, an MLP or a single Linear."""

    __slots__ = ("config", "children", "mlp", "eps", "eps_dtype", "edge_dim", "edge_dtype",
                 "rest")
    AUTOCAST = True

    @staticmethod
    def keep(module, template: str, config: tuple, tensors: list, nn, linears, relus,
             rest, dt: torch.dtype, lin=None, edge_attr: Optional[Tensor] = None) -> None:
        """Keeps the plan of this call on `module` where it can stand for
        later ones (see the class), else drops any older one."""
        x, eps = tensors[0], tensors[2 if edge_attr is not None else 1]
        sequential = type(nn) is torch.nn.Sequential
        children = tuple(nn._modules.values()) if sequential else None
        mlp = None if sequential or nn is linears[0] else _mlp_state(nn)
        # The modules whose calls the fold skips: `nn`, and the children of
        # its folded prefix (each Linear, then its ReLU where folded); of an
        # MLP the norms of its folded layers and its activation (a hook on
        # one that runs after all only sends a call to the full path).
        if sequential:
            prefix = children[:len(linears) + sum(relus)]
        elif mlp is not None:
            act = mlp[2]
            prefix = mlp[1][:len(linears)] + \
                ((act,) if isinstance(act, torch.nn.Module) else ())
        else:
            prefix = ()
        p = _GinPlan._make(module, template, dt, x,
                           (("nn", nn),) + ((("lin", lin),) if edge_attr is not None else ()),
                           ((lin,) if lin is not None else ()) + tuple(linears),
                           watched=(nn,) + prefix)
        # (Under autocast eps of the Linears' dtype, edge_attr of any dtype
        # autocast casts; the function converts them.)
        # (None either while a module it watches has a hook: the fold read
        # that, and would decide otherwise once the hook is gone.)
        if p is None or eps.dtype != p.pdtype or \
                not (sequential or mlp is not None or nn is linears[0]) or \
                any(_observed(m) for m in p.watched) or \
                (edge_attr is not None and (type(edge_attr) is not Tensor or (
                    edge_attr.dtype != dt if p.autocast is None else
                    edge_attr.dtype not in _common._AUTOCAST_CAST))):
            return
        p.config, p.children, p.mlp, p.rest = config, children, mlp, rest
        p.eps, p.eps_dtype = eps, eps.dtype
        p.edge_dim = None if edge_attr is None else edge_attr.size(1)
        p.edge_dtype = None if edge_attr is None else edge_attr.dtype
        p._keep(module)

    def run(self, module, x, edge_index, edge_attr=None):
        """The layer's output, or None where the plan does not stand for
        this call."""
        if not self._stands(module, x, edge_index):
            return None
        nn = self.linears[0][1]
        if self.children is not None and tuple(nn._modules.values()) != self.children:
            return None
        if self.mlp is not None and _mlp_state(nn) != self.mlp:
            return None
        eps = module._parameters.get("eps")
        if eps is None:
            eps = module._buffers.get("eps")
        if eps is not self.eps or eps.dtype != self.eps_dtype or eps.device != self.device:
            return None
        tensors = [x.contiguous()]
        if self.edge_dim is not None:
            if type(edge_attr) is not Tensor or edge_attr.dtype != self.edge_dtype or \
                    edge_attr.device != x.device or edge_attr.dim() != 2 or \
                    edge_attr.shape[0] != edge_index.shape[1] or \
                    edge_attr.shape[1] != self.edge_dim:
                return None
            tensors.append(edge_attr.contiguous())
        tensors.append(eps.contiguous())
        if not self._parts_stand(module, tensors):
            return None
        ei = _common.flip(edge_index, self.flow)
        return self.rest(self._call(module, self.config, ei, x.shape[0], tensors))


def _check_cached_nodes(name: str, kept: tuple, n: int) -> None:
    """GCNConv(cached=True) on `n` nodes where the kept graph has kept[2]:
    PyG would reuse the first call's normalisation (its self-loops and
    degrees on those nodes only), a result that is no GCN of this input;
    refused."""
    if kept[2] != n:
        raise ValueError(
            f"{name}(cached=True): the graph kept at the first call has {kept[2]} "
            f"nodes but x has {n} rows; PyG would reuse the first call's "
            f"normalisation (self-loops and degrees of {kept[2]} nodes). Use "
            f"cached=False for graphs that change, or reset_parameters() to "
            f"keep the next call's graph")


class _GcnPlan(_Plan):
    """A GCNConv's plan (`_Plan`): its gcn_model function, for an
    edge_index without edge weights or with them (`weight_dtype`: their
    dtype then, None: none). Besides `_Plan`'s checks: an edge_weight as
    then (none, or an [E] dense tensor of that dtype on x's device); the
    layer's `lin` and `bias` the same objects, `lin` as then, the bias of
    the same dtype, device and width; its options (`normalize`,
    `add_self_loops`, `improved`, `cached`, the channels) as then; with
    `cached`, the kept graph unweighted (a weighted plan is made only
    without `cached`). The graph (with its self-loops, or them folded into
    the formula) and the weights of its self-loops are derived on every
    call, from the graph's contents and the weights given, as the full path
    derives them (gcn_graph)."""

    __slots__ = ("head", "weight_dtype")
    OPTIONS = ("normalize", "add_self_loops", "cached", "in_channels", "out_channels",
               "improved")
    AUTOCAST = True

    @staticmethod
    def keep(module, x: Tensor, dt: torch.dtype, lin, bias, head: tuple,
             results: tuple, weight_dtype: Optional[torch.dtype] = None) -> None:
        """Keeps the plan of this call on `module` (`head` its config's
        first three entries, `results` its result's conversion,
        `weight_dtype` its edge weights' dtype or None) where it can stand
        for later ones, else drops any older one."""
        p = _GcnPlan._make(module, "gcn_model", dt, x, (("lin", lin),), (lin,),
                           (("bias", bias),), results=results)
        if p is not None:
            p.head, p.weight_dtype = head, weight_dtype
            p._keep(module)

    def run(self, module, x, edge_index, edge_weight=None):
        """The layer's output, or None where the plan does not stand for
        this call."""
        if edge_weight is None:
            if self.weight_dtype is not None:
                return None
        elif type(edge_weight) is not Tensor or edge_weight.dtype != self.weight_dtype or \
                edge_weight.layout != torch.strided or edge_weight.dim() != 1 or \
                edge_weight.device != self.device or \
                edge_weight.size(0) != edge_index.size(1):
            # (None where weight_dtype is None; an [E, 1] column, or weights
            # the full path refuses, take it)
            return None
        if not self._stands(module, x, edge_index):
            return None
        tensors = [x.contiguous()]
        if not self._parts_stand(module, tensors):
            return None
        bias = self.params[0][1]
        if bias is not None:
            tensors.append(bias.contiguous())
        normalize, cached = self.options[0], self.options[2]
        if cached:
            kept = module.__dict__["_cached_edge_index"]
            if kept is None or kept[1] is not None or kept[2] != x.size(0):
                return None
            edge_index = kept[0]
        n = x.size(0)
        ei, weights, w, fold = gcn_graph(module, _common.flip(edge_index, self.flow), n,
                                         self.dtype, edge_weight)
        if w is not None:
            # (As the full path passes it: the mask is in the function's
            # dtype; weights under autocast stay in theirs, converted inside
            # the op.)
            tensors.append(_common.operand(self.dtype, w))
        return self._call(module, self.head + (False, weights, normalize, fold, False),
                          ei, n, tensors)


class _SagePlan(_Plan):
    """A SAGEConv's plan (`_Plan`) on one graph: its sage_layer function,
    without `project`. Besides `_Plan`'s checks: no `size`; the layer's
    `lin_l` and `lin_r` the same objects and as then; its options (`aggr`,
    `normalize`, `root_weight`, `project`, the channels) as then. Made only
    for an edge_index (not a sparse adjacency, whose values would weight the
    messages)."""

    __slots__ = ("config",)
    OPTIONS = ("aggr", "normalize", "root_weight", "project", "in_channels",
               "out_channels")
    AUTOCAST = True

    @staticmethod
    def keep(module, x: Tensor, dt: torch.dtype, lin_l, lin_r, config: tuple) -> None:
        """Keeps the plan of this call on `module` (`lin_r` None without
        the root term) where it can stand for later ones, else drops any
        older one."""
        linears = (("lin_l", lin_l),) + (() if lin_r is None else (("lin_r", lin_r),))
        p = _SagePlan._make(module, "sage_layer", dt, x, linears,
                            tuple(m for _, m in linears))
        if p is not None:
            p.config = config
            p._keep(module)

    def run(self, module, x, edge_index, size=None):
        """The layer's output before `normalize`, or None where the plan
        does not stand for this call."""
        if size is not None or not self._stands(module, x, edge_index):
            return None
        tensors = [x.contiguous()]
        if not self._parts_stand(module, tensors):
            return None
        config = self.config
        if config[6]:  # projected first: W_l again, without a gradient
            tensors.append(tensors[1])
        return self._call(module, config, _common.flip(edge_index, self.flow), x.size(0),
                          tensors)


def _lazy_init_only(m) -> bool:
    """Whether the only thing that may observe or replace a call of module
    `m` is its own lazy initialisation: none (`_observed`), or just the
    forward pre-hook of a lazy `Linear` (PyG's `initialize_parameters`,
    torch's `_infer_parameters`), which sizes the weight from the input and
    keeps its dtype."""
    if m._forward_hooks or m._backward_hooks or m._backward_pre_hooks or \
            "forward" in m.__dict__:
        return False
    hooks = list(m._forward_pre_hooks.values())
    return not hooks or (len(hooks) == 1 and hooks[0] in (
        getattr(m, "initialize_parameters", None), getattr(m, "_infer_parameters", None)))


def _first_linear(nn) -> Optional[torch.nn.Module]:
    """The linear map `nn` first applies to its input, as is (so that an
    input of another dtype than its weight raises in PyTorch): `nn` itself,
    the first module of a `torch.nn.Sequential`, or `lins[0]` of PyG's `MLP`
    (or gnnc.nn.GIN's copy of it: _mlp_prefix's classes), where that is
    exactly a `torch.nn.Linear` (or `LazyLinear`) or gnnc's or PyG's
    `Linear` (lazy ones too: their weight has its dtype before it is sized).
    Only where gnnc sees that call as it is: the containers and the Linear
    of their exact classes (a subclass may have its own forward), no hook on
    them but a lazy Linear's own (a pre-hook may cast the input), none
    global, no `forward` set on one of them; else None (`nn` runs in
    PyTorch, as in PyG)."""
    if not isinstance(nn, torch.nn.Module) or _global_hooks():
        return None
    if type(nn) is torch.nn.Sequential or _is_class(nn, _MLP_CLASSES):
        if _observed(nn):
            return None
        modules = nn if type(nn) is torch.nn.Sequential else nn.lins
        first = modules[0] if len(modules) else None
    else:
        first = nn
    linear = type(first) in (torch.nn.Linear, torch.nn.LazyLinear) or \
        _is_class(first, _LINEAR_CLASSES)
    return first if linear and _lazy_init_only(first) else None


def _check_nn_input(module: torch.nn.Module, x: Tensor, dt: torch.dtype, eps: Tensor,
                    edge_attr: Optional[Tensor] = None,
                    x_dst: Optional[Tensor] = None) -> None:
    """Outside autocast, the input PyG's GIN and GINE give `nn` (the
    aggregate plus (1 + eps) x) is of the dtype `dt` x (the bipartite form's
    x_src and `x_dst`), eps and GINE's (projected) `edge_attr` promote to; a
    first Linear of `nn` of another dtype refuses it (in PyG with PyTorch's
    dtype error): a TypeError naming them. An `nn` of other modules takes
    what it takes. Under autocast, which casts no float64, the Linear
    refuses where one of its input and weight is float64 and the other is
    not. (`eps`: the module's, read once by the caller.)"""
    if dt == x.dtype == eps.dtype:
        return  # nn's input is x's dtype: a Linear of another raises as PyG's does
    first = _first_linear(module.nn)
    if first is None:
        return
    want = first.weight.dtype
    if _common.autocast_dtype(x.device) is not None:
        refused = (dt == torch.float64) != (want == torch.float64)
    else:
        refused = want != dt
    if refused:
        edge = "" if edge_attr is None else f", edge_attr {edge_attr.dtype}"
        xs = f"x is {x.dtype}" if x_dst is None else \
            f"x_src is {x.dtype}, x_dst {x_dst.dtype}"
        # What to convert: those not of the Linear's dtype.
        given = (("x" if x_dst is None else "x_src", x), ("x_dst", x_dst),
                 ("edge_attr", edge_attr), ("eps (the layer)", eps))
        names = [name for name, t in given if t is not None and t.dtype != want]
        raise TypeError(
            f"{type(module).__name__}: nn's input, (1 + eps) x plus the aggregated "
            f"messages, is {dt} ({xs}, eps {eps.dtype}{edge}; "
            f"PyTorch promotes them), but nn's first Linear is {want} "
            f"(PyG's nn raises there too); convert {' and '.join(names)} to {want}")


def _gin_inputs(module: torch.nn.Module, x, edge_index, size, eps: Tensor):
    """GIN's and GINE's checks of forward's inputs (`eps`: the module's):
    (layer name, the graph argument as given, edge_index, a sparse
    adjacency's values, node count).
    A COO adjacency's duplicates: summed for GIN (PyG's spmm), each its own
    edge for GINE (PyG's to_edge_index; its features are per entry)."""
    name = type(module).__name__
    adj = edge_index
    # x of another floating dtype than eps is promoted with it, as in PyG.
    edge_index, values = _common.check_inputs(
        name, x, adj, None, _common.promoting_dtype(x, eps.dtype), module.flow,
        _duplicates(module))
    _common.check_size(name, size, x.size(0))
    return name, adj, edge_index, values, x.size(0)


def _gin_pair_inputs(module: torch.nn.Module, x, edge_index: Tensor, size, eps: Tensor):
    """GIN's and GINE's bipartite inputs (`eps`: the module's): (x_src,
    x_dst, edge_index, (num_src, num_dst), a sparse adjacency's values or
    None), the two sides of equal channels."""
    name = type(module).__name__
    # x_dst of another floating dtype than x_src: PyG adds (1 + eps) x_dst
    # to the sources' aggregate (of x_src's dtype), PyTorch promoting them.
    x_src, x_dst, ei, sizes, values = _common.bipartite_inputs(
        name, x, edge_index, size, (0, 0), _common.promoting_dtype(x, eps.dtype),
        module.flow, _duplicates(module), mixed=True)
    if x_dst is not None and x_dst.size(1) != x_src.size(1):
        raise ValueError(f"{name}: the source features have {x_src.size(1)} "
                         f"channels but the target features {x_dst.size(1)}")
    return x_src, x_dst, ei, sizes, values


def _pair_nn_dtype(dt: torch.dtype, x_src: Tensor, x_dst: Optional[Tensor],
                   eps: Tensor) -> torch.dtype:
    """The dtype of nn's input in PyG's bipartite GIN and GINE outside
    autocast: the aggregate's (`dt`), without x_dst as it is, with x_dst
    promoted with eps and x_dst (PyG's aggregate + (1 + eps) x_dst). Under
    autocast `dt` promoted with eps as param_promoted does, unless a float64
    is among them (then as outside autocast)."""
    if x_dst is None:
        return dt
    wide = _common.param_promoted(dt, x_src, eps.dtype)
    if _common.autocasts(x_src.device, x_src.dtype, x_dst.dtype, eps.dtype):
        return wide
    return _common.promoted(wide, x_dst.dtype)


def _duplicates(module: torch.nn.Module) -> str:
    """sparse_edges' `duplicates` of GIN (PyG's spmm) and GINE (PyG's
    to_edge_index, the features given per entry)."""
    return "entries" if isinstance(module, GINEConv) else "spmm"


def _gin_pair_out(module: torch.nn.Module, out: Tensor, dtype: torch.dtype,
                  x_dst, eps: Tensor) -> Tensor:
    """nn((1 + eps) x_dst + out); without x_dst, nn(out) (PyG's), the
    aggregate `out` taken in PyG's `dtype` first (under autocast the op ran
    in the autocast dtype). `eps`: the module's."""
    out = _common.as_dtype(out, dtype)
    if x_dst is not None:
        out = out + (1 + eps) * x_dst
    return module.nn(out)


class GINConv(torch.nn.Module):
    r"""PyG's `GINConv` (Xu et al.):
    `out_i = nn((1 + eps) x_i + sum_{j -> i} x_j)`.

    The aggregation runs in gnnc; `nn` (any module or callable mapping
    `[N, F]` features) is applied afterwards, its leading Linears and ReLUs
    (of a `torch.nn.Sequential` or PyG's `MLP`: `_leading_mlp`) in the same
    gnn function, the rest in PyTorch. Supported: `eps`,
    `train_eps` (a learnable `eps`), `flow`, PyG's bipartite form
    `forward((x_src, x_dst), edge_index, size=(num_src, num_dst))`
    (docs/Python-nn.md; x_dst None: no `(1 + eps) x` term). Refused: `aggr`
    other than 'add'; with a single `x`, a `size` other than `(N, N)`.
    Parameters and buffers: `nn.*`, `eps`.
    """

    def __init__(self, nn: Callable, eps: float = 0.0, train_eps: bool = False,
                 **kwargs):
        super().__init__()
        self.flow = _common.check_kwargs(type(self).__name__, kwargs)
        _gin_eps(self, nn, eps, train_eps)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset(self.nn)
        with torch.no_grad():
            self.eps.fill_(self.initial_eps)

    @_common.sparse_runs_eagerly
    def forward(self, x, edge_index: Tensor, size=None) -> Tensor:
        plan = _Plan.of(self)
        if plan is not None and size is None:
            out = plan.run(self, x, edge_index)
            if out is not None:
                return out
        if isinstance(x, (tuple, list)):
            return self._bipartite(x, edge_index, size)
        eps = self.eps  # (read once: Module.__getattr__)
        name, adj, edge_index, values, n = _gin_inputs(self, x, edge_index, size, eps)
        ei = _common.flip(edge_index, self.flow)
        dt = _common.compute_dtype(x, eps.dtype)
        weights = _common.message_weights(name, adj, values, "sum", dt)
        # Outside autocast an x of another dtype than eps: PyG's
        # (1 + eps) x, and so nn's input, of the promoted dtype.
        wide = _common.param_promoted(dt, x, eps.dtype)
        _check_nn_input(self, x, wide, eps)
        if weights is not None:
            # PyG's spmm over a torch.sparse adjacency weights the messages.
            agg = _common.weighted_aggregate(ei, n, _common.cast(dt, x), weights, "sum")
            return self.nn((1 + eps) * x + agg)
        return _gin_run(self, "gin", ei, n, wide, [x, eps],
                        remember=() if adj is edge_index else None)

    def _bipartite(self, x, edge_index: Tensor, size) -> Tensor:
        """PyG's bipartite GIN: nn((1 + eps) x_dst + sum of the sources)."""
        eps = self.eps  # (read once: Module.__getattr__)
        x_src, x_dst, ei, sizes, values = _gin_pair_inputs(self, x, edge_index, size, eps)
        dt = _common.compute_dtype(x_src, eps.dtype)
        weights = _common.message_weights(type(self).__name__, edge_index, values, "sum",
                                          dt)
        _check_nn_input(self, x_src, _pair_nn_dtype(dt, x_src, x_dst, eps), eps,
                        x_dst=x_dst)
        return _gin_pair_out(self, _aggregate_pair(self, x_src, "sum", dt, ei, sizes,
                                                   weights), x_src.dtype, x_dst, eps)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(nn={self.nn})"


def _foldable_lin(lin, edge_attr: Tensor, x: Tensor):
    """GINE's edge projection `lin` as (weight, bias or None) where it can
    be part of the gnn function, else None (it runs in PyTorch, as PyG's):
    a plain, sized, unobserved Linear on `edge_attr`'s width (_plain_linear),
    no global hook, and outside autocast its weight, its bias, `edge_attr`
    and `x` of one dtype (else PyTorch's promotion and dtype errors stay
    PyTorch's); under autocast any dtypes it casts (none float64: PyG's lin
    then casts both, and the function converts them, _common.operand)."""
    if _global_hooks():
        return None
    dtype = x.dtype
    if _common.autocast_dtype(x.device) is not None:
        if not all(d in _common._AUTOCAST_CAST
                   for d in (dtype, edge_attr.dtype, lin.weight.dtype)):
            return None
        dtype = None
    elif edge_attr.dtype != dtype:
        return None
    w = _plain_linear(lin, edge_attr.size(1), dtype)
    if w is None:
        return None
    b = lin.bias
    if b is not None and (b.dtype != dtype if dtype is not None else
                          b.dtype not in _common._AUTOCAST_CAST):
        return None
    return w, b


class GINEConv(torch.nn.Module):
    r"""PyG's `GINEConv` (Hu et al., "Strategies for Pre-training Graph
    Neural Networks"):
    `out_i = nn((1 + eps) x_i + sum_{j -> i} relu(x_j + e_ji))`.

    The gather, the message and the sum run in gnnc as one edge pass (no
    `[E, F]` temporary besides the edge features); `nn` runs in PyTorch
    afterwards. `edge_attr` ([E, F], or [E, edge_dim] with `edge_dim`, then
    projected by `lin`, PyG's `Linear(edge_dim, F)`, F read from `nn` as PyG
    reads it) is required. Supported: `eps`, `train_eps`, `edge_dim`, `flow`,
    a sparse adjacency (a hybrid COO `adj_t`'s values [nnz, F] are the edge
    features when `edge_attr` is None; else `edge_attr` in the adjacency's
    order, as PyG), PyG's bipartite form `forward((x_src, x_dst), edge_index,
    edge_attr, size=(num_src, num_dst))` (x_dst None: no `(1 + eps) x_dst`
    term; docs/Python-nn.md). Refused: `aggr` other than 'add'; with a
    single `x`, a `size` other than `(N, N)`. Parameters and buffers: `nn.*`,
    `eps`, `lin.*`.
    """

    def __init__(self, nn: Callable, eps: float = 0.0, train_eps: bool = False,
                 edge_dim: Optional[int] = None, **kwargs):
        super().__init__()
        name = type(self).__name__
        self.flow = _common.check_kwargs(name, kwargs)
        _gin_eps(self, nn, eps, train_eps)
        if edge_dim is not None:
            edge_dim = _common.check_channels(name, "edge_dim", edge_dim)
            first = nn[0] if isinstance(nn, torch.nn.Sequential) else nn
            if hasattr(first, "in_features"):
                in_channels = first.in_features
            elif hasattr(first, "in_channels"):
                in_channels = first.in_channels
            else:
                raise ValueError(f"{name}: could not infer the input channels from "
                                 f"`nn` (edge_dim needs them: its first module has "
                                 f"neither `in_features` nor `in_channels`)")
            self.lin = Linear(edge_dim, in_channels)
        else:
            self.lin = None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset(self.nn)
        with torch.no_grad():
            self.eps.fill_(self.initial_eps)
        if self.lin is not None:
            self.lin.reset_parameters()

    @_common.sparse_runs_eagerly
    def forward(self, x: Tensor, edge_index: Tensor,
                edge_attr: Optional[Tensor] = None, size=None) -> Tensor:
        plan = _Plan.of(self)
        if plan is not None and size is None:
            out = plan.run(self, x, edge_index, edge_attr)
            if out is not None:
                return out
        if isinstance(x, (tuple, list)):
            return self._bipartite(x, edge_index, edge_attr, size)
        eps = self.eps  # (read once: Module.__getattr__)
        name, adj, edge_index, values, n = _gin_inputs(self, x, edge_index, size, eps)
        edge_attr = self._sparse_edge_attr(adj, edge_attr, values)
        e, lin = self._edge_features(edge_attr, edge_index, x, fold=True)
        ei = _common.flip(edge_index, self.flow)
        dt = _common.edge_promoted(_common.compute_dtype(x, eps.dtype, e.dtype), e)
        dt = _common.param_promoted(dt, x, eps.dtype)
        _check_nn_input(self, x, dt, eps, e)
        # (A plan for the next calls where the edge features go to the
        # function as given: no sparse adjacency, and `lin` folded or none.)
        plain = adj is edge_index and edge_attr is e
        if lin is None:
            return _gin_run(self, "gine", ei, n, dt, [x, e, eps],
                            remember=(None, e) if plain and self.lin is None else None)
        # `lin` inside the gnn function: one GEMM over the raw edge features
        # there, its gradients in gnnc's backward; no PyTorch op or autograd
        # node of its own, and the edge features put in the graph's edge
        # order are edge_dim wide, not the node features' width.
        w, b = lin
        return _gin_run(self, "gine", ei, n, dt,
                        [x, e, eps, w] + ([] if b is None else [b]),
                        ((int(w.size(1)), b is not None),),
                        remember=(self.lin, e) if plain else None)

    def _bipartite(self, x, edge_index: Tensor, edge_attr, size) -> Tensor:
        """PyG's bipartite GINE: nn((1 + eps) x_dst + sum_j relu(x_src_j +
        e_ji)), the sum on the bipartite graph (docs/Python-nn.md)."""
        adj = edge_index
        eps = self.eps  # (read once: Module.__getattr__)
        x_src, x_dst, ei, sizes, values = _gin_pair_inputs(self, x, edge_index, size, eps)
        edge_attr = self._sparse_edge_attr(adj, edge_attr, values)
        e, _ = self._edge_features(edge_attr, ei, x_src)
        dt = _common.edge_promoted(_common.compute_dtype(x_src, eps.dtype, e.dtype), e)
        _check_nn_input(self, x_src, _pair_nn_dtype(dt, x_src, x_dst, eps), eps, e,
                        x_dst)
        want = _common.promoted(x_src.dtype, e.dtype)
        out = _common.propagate(self, "gine_pair", (int(x_src.size(1)), _common._DTYPES[dt]),
                                ei, sizes, *_common.operands(dt, x_src, e),
                                results=_common.returned(dt, want))
        return _gin_pair_out(self, out, want, x_dst, eps)

    def _sparse_edge_attr(self, adj, edge_attr, values):
        """The edge features with a sparse adjacency `adj` (its `values`):
        a hybrid COO's values [nnz, F] where `edge_attr` is None, else
        `edge_attr` in the adjacency's order (PyG's two ways); with an
        edge_index, `edge_attr` as given."""
        if not _common.is_sparse(adj):
            return edge_attr
        if edge_attr is None:
            return values
        # A COO adjacency's entries stay in their order (_gin_inputs), as the
        # features are given.
        return edge_attr

    def _edge_features(self, edge_attr, edge_index: Tensor, x: Tensor, fold: bool = False):
        """(edge features, None): `edge_attr` checked and projected by `lin`
        where there is one. With `fold`, (`edge_attr` checked, (lin's
        weight, its bias or None)) where `lin` can be part of the gnn
        function instead (_foldable_lin)."""
        name = type(self).__name__
        if edge_attr is None:
            raise ValueError(f"{name}: edge_attr is required (the messages are "
                             f"relu(x_j + edge_attr))")
        if not isinstance(edge_attr, Tensor):
            raise TypeError(f"{name}: expected edge_attr to be a torch.Tensor, got "
                            f"{type(edge_attr).__name__}")
        _common.check_dense(name, "edge_attr", edge_attr)
        e = edge_index.size(1)
        if edge_attr.dim() != 2 or edge_attr.size(0) != e:
            raise ValueError(f"{name}: expected edge_attr of shape [num_edges = {e}, "
                             f"channels], got {tuple(edge_attr.shape)}")
        if edge_attr.device != x.device:
            raise ValueError(f"{name}: x is on {x.device} but edge_attr is on "
                             f"{edge_attr.device}; move both to one device")
        # PyG adds edge_attr to the messages, promoting them, where it is
        # not projected first (lin, whose weights take one dtype; outside
        # autocast its projection then promotes the messages with x).
        proj = self.lin  # (read once: Module.__getattr__)
        # (Under autocast PyG's lin takes what autocast casts, unless a
        # float64 is involved: then, as outside it, its own dtype.)
        lin = None if proj is None or _common.lazy(proj) or _common.autocasts(
            x.device, x.dtype, edge_attr.dtype, proj.weight.dtype) else proj.weight.dtype
        if lin is not None and lin != x.dtype:
            if edge_attr.dtype != lin:
                raise TypeError(f"{name}: edge_attr is {edge_attr.dtype} but lin (the "
                                f"edge_dim projection) is {lin}; convert edge_attr")
        elif not (_common.compatible(edge_attr.dtype, x.dtype, x.device) or
                  proj is None and _common.promotes(edge_attr.dtype, x.dtype, x.device)):
            raise TypeError(f"{name}: edge_attr is {edge_attr.dtype} but x is "
                            f"{x.dtype}; convert one of them")
        if proj is not None:
            if not _common.lazy(proj) and \
                    edge_attr.size(1) != _common.in_channels_of(proj):
                raise ValueError(f"{name}: expected edge_attr of "
                                 f"{_common.in_channels_of(proj)} channels (edge_dim), "
                                 f"got {edge_attr.size(1)}")
            folded = _foldable_lin(proj, edge_attr, x) if fold else None
            if folded is not None:
                if folded[0].size(0) != x.size(1):
                    raise ValueError(
                        f"{name}: node and edge feature dimensionalities do not match "
                        f"(x has {x.size(1)} channels, lin projects the edge features "
                        f"to {folded[0].size(0)})")
                return edge_attr.contiguous(), folded
            edge_attr = proj(edge_attr)
        if edge_attr.size(1) != x.size(1):
            raise ValueError(
                f"{name}: node and edge feature dimensionalities do not match "
                f"(x has {x.size(1)} channels, the edge features "
                f"{edge_attr.size(1)}); set edge_dim to project the edge features")
        return edge_attr.contiguous(), None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(nn={self.nn})"


class _AgnnPlan(_Plan):
    """An AGNNConv's plan (`_Plan`): its agnn function in float32 or
    float64, x and `beta` of one dtype, or under autocast in its dtype
    (x and `beta` of dtypes it casts, converted inside the function, the
    result in PyG's dtype). Besides `_Plan`'s checks: `beta` (a
    parameter, or a buffer without `requires_grad`) the same object, of
    that dtype and device, one element; `add_self_loops` and
    `requires_grad` as then. The graph with its self-loops is derived from
    the graph's contents on every call, as on the full path. Made only for
    an edge_index (not a sparse adjacency)."""

    __slots__ = ("beta", "beta_dtype")
    OPTIONS = ("add_self_loops", "requires_grad")
    AUTOCAST = True

    @staticmethod
    def keep(module, x: Tensor, dt: torch.dtype, beta: Tensor, results: tuple) -> None:
        """Keeps the plan of this call on `module` (`results` its result's
        conversion) where it can stand for later ones, else drops any older
        one."""
        if dt in _common._HALVES:  # (only under autocast, in its dtype)
            stands = _common.autocast_dtype(x.device) == dt and \
                beta.dtype in _common._AUTOCAST_CAST
        else:
            stands = beta.dtype == dt
        if not stands:
            _Plan.drop(module)
            return
        p = _AgnnPlan._make(module, "agnn", dt, x, results=results)
        if p is not None:
            p.beta, p.beta_dtype = beta, beta.dtype
            p._keep(module)

    def run(self, module, x, edge_index):
        """The layer's output, or None where the plan does not stand for
        this call."""
        if not self._stands(module, x, edge_index):
            return None
        beta = module._parameters.get("beta")
        if beta is None:
            beta = module._buffers.get("beta")
        if beta is not self.beta or beta.dtype != self.beta_dtype or \
                beta.device != self.device or beta.numel() != 1:
            return None
        n = x.size(0)
        ei = _common.flip(edge_index, self.flow)
        tensors = [x.contiguous(), beta.contiguous()]
        keep = None
        if self.options[0]:  # add_self_loops
            ei, keep = _common.with_self_loops(ei, n, self.dtype)
            if keep is not None:
                tensors.append(keep)
        return self._call(module, (self.cin, _common._DTYPES[self.dtype], keep is not None),
                          ei, n, tensors)


class AGNNConv(torch.nn.Module):
    r"""PyG's `AGNNConv` (Thekumparampil et al.):
    `out_i = sum_{j -> i} softmax_j(beta cos(x_i, x_j)) x_j`.

    Supported: `requires_grad` (a learnable `beta`, else a buffer of ones),
    `add_self_loops` (PyG's: the input's self-loops are removed and one is
    added per node), `flow`. Refused: `aggr` other than 'add'.
    Parameters or buffers: `beta`.
    """

    def __init__(self, requires_grad: bool = True, add_self_loops: bool = True,
                 **kwargs):
        super().__init__()
        self.flow = _common.check_kwargs(type(self).__name__, kwargs)
        self.requires_grad = requires_grad
        self.add_self_loops = add_self_loops
        _common.parameter_or_buffer(self, "beta", requires_grad,
                                    torch.empty(1) if requires_grad else torch.ones(1))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.requires_grad:
            with torch.no_grad():
                self.beta.fill_(1)

    @_common.sparse_runs_eagerly
    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        plan = _Plan.of(self)
        if plan is not None:
            out = plan.run(self, x, edge_index)
            if out is not None:
                return out
        name = type(self).__name__
        adj = edge_index
        # A sparse adjacency's repeated entries: one edge with self-loops
        # (PyG's add_self_loops rebuilds it coalesced), else each its own.
        # x of another floating dtype than beta is promoted with it, as in
        # PyG (beta times the cosines).
        beta_p = self.beta  # (read once: Module.__getattr__)
        edge_index, _ = _common.check_inputs(name, x, edge_index, None,
                                             _common.promoting_dtype(x, beta_p.dtype),
                                             self.flow,
                                             "summed" if self.add_self_loops else "entries")
        n = x.size(0)
        ei = _common.flip(edge_index, self.flow)
        dt = _common.param_promoted(_common.compute_dtype(x, beta_p.dtype), x, beta_p.dtype)
        t = _common._DTYPES[dt]
        # One head, scores [E]: the backward keeps no edge-sized temporary
        # (with [N, 1, F] features and [E, 1] scores it did).
        xc, beta = _common.operands(dt, x, beta_p)
        results = ()
        if dt in _common._HALVES:
            # PyG's dtype: x times the softmax of beta * (F.normalize(x) . ),
            # promoted (the scores float32 under CUDA's autocast).
            scores = _common.widened(_common.promoted(beta_p.dtype, x.dtype), x.device)
            results = _common.returned(dt, _common.promoted(x.dtype, scores))
        if _common.is_sparse(adj):
            _Plan.drop(self)
        else:  # (a plan for the next calls)
            _AgnnPlan.keep(self, x, dt, beta_p, results)
        keep = None
        if self.add_self_loops:
            ei, keep = _common.with_self_loops(ei, n, dt)
        if keep is None:
            return _common.propagate(self, "agnn", (int(x.size(1)), t, False), ei, n, xc, beta,
                                     results=results)
        return _common.propagate(self, "agnn", (int(x.size(1)), t, True), ei, n, xc, beta,
                                 keep, results=results)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
