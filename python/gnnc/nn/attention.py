"""GAT, GATv2 and Graph Transformer: drop-in replacements of PyG's attention
layers whose scores, softmax and aggregation run as one compiled `gnn`
function (see `_ir.py`). On one graph the projections are in that function
too, with GAT's and GATv2's bias and the Transformer's skip where they are a
plain sum; the rest (residual, the heads' mean, beta, bipartite
projections) runs in PyTorch."""

from typing import Optional

import torch
from torch import Tensor

from . import _common
from ._common import Linear
from ._plan import _Plan
from .conv import check_folded_linears


def _heads_out(out: Tensor, concat: bool) -> Tensor:
    """[N, H, C] -> [N, H * C] (concat) or the mean over heads [N, C]
    (flatten, not reshape(N, -1): N may be 0)."""
    return out.flatten(1) if concat else out.mean(dim=1)


class _HeadsLayer(torch.nn.Module):
    """What the multi-head attention layers share: combining the heads of
    the template's output, the residual and bias, and the repr."""

    def _gat_options(self, kwargs, in_channels, out_channels, heads, concat,
                     negative_slope, dropout, add_self_loops, edge_dim, fill_value,
                     residual) -> tuple:
        """GATConv's and GATv2Conv's constructor arguments they share, checked
        and kept as PyG's attributes; (in_src, in_dst), the channels of the
        sources and the destinations (`in_channels` or a pair)."""
        name = type(self).__name__
        self.flow = _common.check_kwargs(name, kwargs)
        in_src, in_dst = _common.check_channel_pair(name, in_channels)
        self.in_channels = (tuple(in_channels) if isinstance(in_channels, (tuple, list))
                            else _common.check_channels(name, "in_channels", in_channels))
        self.out_channels = _common.check_channels(name, "out_channels", out_channels)
        self.heads = _common.check_heads(name, heads)
        self.concat = concat
        self.negative_slope = float(negative_slope)
        self.dropout = _common.check_dropout(name, dropout)
        self.add_self_loops = add_self_loops
        self.edge_dim = _common.check_edge_dim(name, edge_dim)
        self.fill_value = _common.check_fill_value(name, fill_value)
        self.residual = residual
        return in_src, in_dst

    def _heads(self, out, weights: bool, adj=None, shape=None):
        """The template's output (with its attention weights when asked) as
        (heads concatenated or averaged, the weights or None). With a
        sparse adjacency `adj` of `shape` (num_dst, num_src) the weights
        are returned as PyG returns them for one (_sparse_attention)."""
        out, attention = out if weights else (out, None)
        if attention is not None and _common.is_sparse(adj):
            attention = _sparse_attention(adj, attention, shape,
                                          type(self).__name__ != "TransformerConv",
                                          self._sparse_duplicates() == "summed")
        return _heads_out(out, self.concat), attention

    def _finished(self, out, weights: bool, adj, shape):
        """A whole-layer template's result (the layer's output, with its
        attention weights when asked), the weights as `_heads` gives them."""
        if weights and _common.is_sparse(adj):
            out, attention = out
            return out, _sparse_attention(adj, attention, shape,
                                          type(self).__name__ != "TransformerConv",
                                          self._sparse_duplicates() == "summed")
        return out

    def _check_sparse(self, name: str, adj, edge_attr, weights: bool) -> None:
        """A sparse adjacency's refusals: the extras PyG does not take with
        one, and attention weights (`weights`: requested) of a kind gnnc
        cannot return; nothing for an edge_index."""
        if _common.is_sparse(adj):
            _common.refuse_sparse_extras(name, adj, edge_attr=edge_attr)
            self._check_sparse_weights(name, adj, weights)

    @staticmethod
    def _check_sparse_weights(name: str, adj, requested: bool) -> None:
        """return_attention_weights with a sparse adjacency: a torch.sparse
        one (coalesced where COO) only."""
        if not requested or not _common.is_sparse(adj):
            return
        if not isinstance(adj, Tensor):
            _common.refuse(name, "return_attention_weights with a "
                           "torch_sparse.SparseTensor adjacency",
                           "pass a torch.sparse adjacency or edge_index")
        if adj.layout == torch.sparse_coo and not adj.is_coalesced():
            _common.refuse(name, "return_attention_weights with an uncoalesced sparse "
                           "COO adjacency", "pass adj_t.coalesce()")

    def _inputs(self, name: str, x, edge_index: Tensor, dtype: torch.dtype, size=None):
        """(x_src, x_dst, edge_index, sizes): a bipartite (x_src, x_dst) pair
        through the layer's `_pair` (sizes (num_src, num_dst), `size` PyG's
        (num_src, num_dst) where the layer takes it), or one x checked as
        every layer checks it (x_src = x_dst = x, sizes None)."""
        if isinstance(x, (tuple, list)) or isinstance(self.in_channels, tuple):
            return self._pair(name, x, edge_index, size)
        edge_index, _ = _common.check_inputs(name, x, edge_index, _common.channels(self),
                                             dtype, self.flow, self._sparse_duplicates())
        if self.in_channels <= 0:
            _common.materialize_lazy(self, x, self._lazy_first())
        return x, x, edge_index, None

    def _lazy_first(self):
        """The lazy Linears PyG's forward calls first (materialize_lazy):
        GAT's and GATv2's residual projection, before the others."""
        res = getattr(self, "res", None)
        return (res,) if res is not None else ()

    def _pair(self, name: str, x, edge_index: Tensor, size=None):
        """PyG's bipartite input (x_src, x_dst), x_dst required (the layer
        reads both sides), checked against the Linears that read each side
        (`_sides`)."""
        x_src, x_dst, edge_index, sizes, _ = _common.linear_pair_inputs(
            name, x, edge_index, size, self._sides(), self.flow, targets_required=True,
            first=self._lazy_first(), duplicates=self._sparse_duplicates())
        return x_src, x_dst, edge_index, sizes

    def _sparse_duplicates(self) -> str:
        """How a sparse adjacency's repeated entries are read (sparse_edges'
        `duplicates`): as one edge with self-loops, whatever the layout
        (PyG's add_self_loops rebuilds the tensor coalesced), else each as
        its own edge (PyG reads the entries as they are)."""
        return "summed" if _common.setting(self, "add_self_loops", False) else "entries"

    def _bias_in_function(self, dt: torch.dtype, scores: torch.dtype, res,
                          bias: Optional[Tensor]) -> bool:
        """Whether the bias joins the layer's gnn function (GAT, GATv2 on
        one graph): added to the heads' concatenation, no residual, where
        PyG adds it in the layer's dtype `dt`, or under autocast, where PyG
        adds a float32 bias in float32 (to float32 messages where the
        attention weights are float32: `scores`, _scores_dtype): the
        function adds it rounded to `dt`, rounds the sum to `dt` (PyG's
        float32 sum has no such rounding; within the documented tolerance)
        and returns it in PyG's dtype (`_attention`'s `out_dtype`): no
        addition and autograd node after the op. `res` and `bias`: the
        layer's (read once by the caller)."""
        if not self.concat or res is not None or bias is None:
            return False
        if bias.dtype == dt and scores == dt:
            return True
        return dt in _common._HALVES and bias.dtype in _common._AUTOCAST_CAST and \
            _common.autocast_dtype(bias.device) == dt

    def _residual_and_bias(self, x: Tensor, out: Tensor) -> Tensor:
        if self.res is not None:
            out = out + self.res(x)
        if self.bias is not None:
            out = out + self.bias
        return out

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.in_channels}, {self.out_channels}, "
                f"heads={self.heads})")


def _shape(x_src: Tensor, sizes) -> tuple:
    """The adjacency's shape (num_dst, num_src): one graph's (N, N), or a
    bipartite graph's from its sizes (num_src, num_dst)."""
    return (x_src.size(0),) * 2 if sizes is None else (sizes[1], sizes[0])


def _sparse_attention(adj: Tensor, attention: tuple, shape: tuple, with_values: bool,
                      loops: bool):
    """The attention weights (edge_index, alpha [E, H]) of a layer given a
    torch.sparse adjacency `adj` [num_dst, num_src] = `shape`, as PyG returns
    them for one: GAT and GATv2 (`with_values`) the adjacency the softmax
    ran over (self-loops included) holding the weights as its values
    ([num_dst, num_src, H], coalesced: a duplicate entry's weights summed,
    in adj's layout), with the weights in the order of PyG's edges: with
    self-loops (`loops`) those of its coalesced graph, without them adj's
    entries (edge_index's: sparse_edges keeps them); TransformerConv `adj`
    itself with the weights in its entry order."""
    edge_index, alpha = attention
    if not with_values:
        return adj, alpha
    out = torch.sparse_coo_tensor(edge_index.flip(0), alpha, tuple(shape) + alpha.shape[1:],
                                  device=alpha.device).coalesce()
    if adj.layout == torch.sparse_csr:
        out = out.to_sparse_csr()
    elif adj.layout == torch.sparse_csc:
        out = out.to_sparse_csc()
    return out, (out.values() if loops else alpha)


def _check_attention_shape(layer: str, heads: int, channels: int, params) -> None:
    """The attention vectors ([1, heads, channels], as built) against the
    layer's `heads` and `out_channels` now: changed after construction,
    PyG's layer fails on the shapes; gnnc viewed the vectors as the new
    shape and returned a result."""
    for name, p in params:
        if tuple(p.shape) != (1, heads, channels):
            raise ValueError(
                f"{layer}: {name} has shape {list(p.shape)} but heads={heads} and "
                f"out_channels={channels} make [1, {heads}, {channels}]; build a new "
                f"layer to change heads or out_channels")


def _scores_dtype(dt: torch.dtype, device: torch.device, *params: torch.dtype) -> torch.dtype:
    """The dtype of PyG's attention weights where the op runs in `dt` (the
    projections' dtype): the scores `(h * att).sum(-1)` promote it with the
    attention parameters' dtypes `params`, and under CUDA's autocast `sum`
    and the softmax's `exp` are float32 (_common.widened)."""
    if dt not in _common._HALVES:
        return dt
    return _common.widened(_common.promoted(dt, *params), device)


def _attention(template: str, config: tuple, layer, x: Tensor, edge_index: Tensor,
               heads: int, *tensors: Tensor, dtype: torch.dtype, scores: torch.dtype,
               weights: bool = False, edge_attr: Optional[Tensor] = None, edge_fn=None,
               num_nodes=None, extra_config: tuple = (), out_dtype=None):
    """Runs an attention template (its config, then `masked, dropout,
    weights, edge`) with PyG's self-loops and attention dropout, in `dtype`
    (the config's element type): `tensors`, the edge term, the self-loop
    mask and the dropout mask enter the op in it. The result is returned in
    PyG's dtypes, `scores` (_scores_dtype) for the attention weights and
    for the aggregate what the messages `h * alpha` promote to.

    `edge_attr` ([E, D], already checked) are edge features: given PyG's
    self-loop features (`fill_value`) when self-loops are added, then turned
    by `edge_fn` into the template's edge argument. Returns the [N, H, C]
    aggregate, or with `weights` (aggregate, (edge_index, attention weights))
    as PyG's `return_attention_weights` gives them: the graph after PyG's
    self-loop handling, in the caller's orientation. `num_nodes`: a
    bipartite graph's (num_src, num_dst) (a template on a bipartite graph,
    its node tensors with their side's rows; self-loops, as PyG, on the
    first min(num_src, num_dst) nodes; the aggregate has num_dst rows),
    default x.size(0). `extra_config` follows the masks' in the config.
    `out_dtype`: the aggregate's dtype where a bias in the function
    promotes it too (None: what the messages promote to)."""
    n = x.size(0) if num_nodes is None else num_nodes
    ei = _common.flip(edge_index, layer.flow)
    extra = []
    loops = bool(_common.setting(layer, "add_self_loops", False))
    keep = None
    # PyG's self-loops of a bipartite graph: (i, i) for i < min(num_src, num_dst).
    n_loops = min(n) if isinstance(n, tuple) else n
    if loops:
        ei, keep = _common.with_self_loops(ei, n_loops, dtype,
                                           n if isinstance(n, tuple) else None)
    if edge_attr is not None:
        if loops and isinstance(n, tuple) and isinstance(layer.fill_value, str) and \
                n[1] > n_loops:
            raise ValueError(
                f"{type(layer).__name__}: fill_value={layer.fill_value!r} reduces the "
                f"edge features per destination into the min(num_src, num_dst) = "
                f"{n_loops} self-loop rows, but the graph has {n[1]} destinations (PyG "
                f"fails here too); pass a number or a tensor as fill_value, or "
                f"add_self_loops=False")
        if loops:
            edge_attr = _common.self_loop_attr(edge_attr, edge_index, keep, n_loops,
                                               layer.fill_value)
        extra.append(_common.operand(dtype, edge_fn(edge_attr)))
    if keep is not None:
        extra.append(keep)
    masked = keep is not None
    dropout = layer.training and layer.dropout > 0.0
    if dropout:
        extra.append(_common.attention_dropout_mask(
            (ei.size(1), heads), layer.dropout, dtype, x.device))
    if out_dtype is None:
        out_dtype = _common.promoted(dtype, scores)
    # The results in PyG's dtypes, converted inside the op.
    results = _common.returned(dtype, out_dtype, *((scores,) if weights else ()))
    result = _common.propagate(layer, template, config + (masked, dropout, weights,
                                                   edge_attr is not None) + extra_config,
                               ei, n, *_common.operands(dtype, *tensors), *extra,
                               results=results)
    if not weights:
        return _common.as_dtype(result, out_dtype)
    out, alpha = result
    out, alpha = _common.as_dtype(out, out_dtype), _common.as_dtype(alpha, scores)
    if masked:
        # PyG's remove_self_loops + add_self_loops: the input's self-loops go
        # (data-dependent: a graph break under torch.compile, only here).
        if x.is_meta:
            raise NotImplementedError(
                f"{type(layer).__name__}: return_attention_weights on the meta device "
                f"(the graph after self-loop handling has a data-dependent size)")
        kept = keep != 0
        ei, alpha = ei[:, kept], alpha[kept]
    return out, (_common.public(_common.flip(ei, layer.flow)) if loops else edge_index,
                 alpha)


class _GatPlan(_Plan):
    """A GATConv's plan (_plan._Plan) on one graph: its gat_layer function,
    without edge features or attention weights, in float32 or float64, or
    under autocast in its dtype (the attention's result in PyG's dtype,
    converted inside the function: `results`).
    Besides `_Plan`'s checks: the layer's Linears (`lin`), `res`, attention
    vectors (`att_src`, `att_dst`) and `bias` the same objects (each Linear
    as then; the parameters of the same shapes, dtype and device); its
    options (heads, channels, concat, negative_slope, dropout,
    add_self_loops, no `lin_edge`) as then; no `size` or
    `return_attention_weights`. The graph with its self-loops is derived
    from the graph's contents on every call, and the attention dropout's
    mask drawn anew on every training call, as on the full path. Made only
    for an edge_index (not a sparse adjacency)."""

    __slots__ = ("res", "head", "bias_in_function")
    # (`lin_edge` None is a plain attribute; a Linear there is a submodule)
    OPTIONS = ("heads", "out_channels", "concat", "negative_slope", "dropout",
               "add_self_loops", "in_channels", "lin_edge")
    TEMPLATE = "gat_layer"
    AUTOCAST = True
    # Edge features without `lin_edge`: unused (GAT, as PyG), or refused by
    # the full path (GATv2).
    EDGE_ATTR_UNUSED = True

    @classmethod
    def keep(cls, module, x: Tensor, dt: torch.dtype, linears: tuple, operands: tuple,
             res, params: tuple, bias_in_function: bool, head: tuple,
             out_dtype: torch.dtype) -> None:
        """Keeps the plan of this call on `module` where it can stand for
        later ones, else drops any older one: `linears` the (name, Linear)
        pairs the layer's function reads, `operands` the Linears whose
        weights (and biases) enter it in order, `params` the (name,
        parameter) pairs of its attention vectors and then its bias (None:
        none), `head` its config's first entries, `out_dtype` the dtype the
        function returns its result in (`_attention`'s). `res` (None: none)
        is called in PyTorch, as on the full path. In a half type only
        under autocast."""
        if dt in _common._HALVES and _common.autocast_dtype(x.device) != dt:
            _Plan.drop(module)
            return
        p = cls._make(module, cls.TEMPLATE, dt, x, linears + (("res", res),), operands,
                      params, results=_common.returned(dt, out_dtype))
        if p is not None:
            p.res, p.bias_in_function, p.head = res, bias_in_function, head
            p._keep(module)

    def run(self, module, x, edge_index, edge_attr=None, size=None,
            return_attention_weights=None):
        """The layer's output, or None where the plan does not stand for
        this call."""
        if size is not None or return_attention_weights or \
                (edge_attr is not None and not self.EDGE_ATTR_UNUSED) or \
                not self._stands(module, x, edge_index):
            return None
        tensors = [x.contiguous()]
        if not self._parts_stand(module, tensors):
            return None
        dt, res = self.dtype, self.res
        heads, c, concat, _, p, loops = self.options[:6]
        *atts, (_, bias, _) = self.params
        tensors += [t.view(heads, c) for _, t, _ in atts]
        if self.bias_in_function:
            tensors.append(bias)
        n = x.size(0)
        ei, keep = _common.flip(edge_index, self.flow), None
        if loops:
            ei, keep = _common.with_self_loops(ei, n, dt)
            if keep is not None:
                tensors.append(keep)
        dropout = module.training and p > 0.0
        if dropout:
            tensors.append(_common.attention_dropout_mask((ei.size(1), heads), p, dt,
                                                          x.device))
        out = self._call(module, self.head + (keep is not None, dropout, False, False),
                         ei, n, tensors)
        if self.bias_in_function:
            return out
        out = _heads_out(out, concat)
        if res is not None:
            out = out + res(x)
        return out if bias is None else out + bias


class _Gatv2Plan(_GatPlan):
    """A GATv2Conv's plan: as GATConv's (`_GatPlan`) with its gatv2_layer
    function, `lin_l` and `lin_r` (one Linear with `share_weights`, whose
    value is an option too) and `att`; edge features take the full path
    (which refuses them without `edge_dim`)."""

    __slots__ = ()
    OPTIONS = _GatPlan.OPTIONS + ("share_weights",)
    TEMPLATE = "gatv2_layer"
    EDGE_ATTR_UNUSED = False


class GATConv(_HeadsLayer):
    r"""PyG's `GATConv` (Velickovic et al.):
    `alpha_ij = softmax_j(leaky_relu(a_src . W x_j + a_dst . W x_i))`,
    `out_i = concat_h(sum_j alpha_ij W x_j) + b`.

    Supported: `heads`, `concat` (else the mean over heads),
    `negative_slope`, `dropout` on the attention coefficients (training mode),
    `add_self_loops` (PyG's: the input's self-loops are removed, one is added
    per node), `edge_dim` with `edge_attr` (the score term
    `att_edge . W_e e_ji`, computed in PyTorch, enters the gnn function as an
    edge argument; without `edge_dim`, `edge_attr` is unused, as in PyG),
    `fill_value` (the self-loops' edge features: None, a number, a tensor,
    'add'/'sum'/'mean'/'max'/'min'/'mul'), `bias`, `residual`, `flow`,
    `return_attention_weights` (PyG's `(edge_index, alpha)`, after its
    self-loop handling and dropout; a graph break under torch.compile when
    self-loops are added), PyG's bipartite form (`(in_src, in_dst)`
    channels: `lin_src` and `lin_dst`; `forward((x_src, x_dst), edge_index,
    size=(num_src, num_dst))`: the messages and `att_src` read the sources'
    projection, `att_dst` and the residual the targets'; self-loops on the
    first min(num_src, num_dst) nodes; docs/Python-nn.md). Refused
    (`NotImplementedError`): `aggr` other than 'add'; `ValueError`: a pair
    without target features. Lazy `in_channels=-1` (or `(-1, -1)`) works.
    Parameters: `lin.weight` (or `lin_src.weight`, `lin_dst.weight`),
    `att_src`, `att_dst`, `lin_edge.weight`, `att_edge`, `bias`, `res.weight`.
    """

    def __init__(self, in_channels: int, out_channels: int, heads: int = 1,
                 concat: bool = True, negative_slope: float = 0.2,
                 dropout: float = 0.0, add_self_loops: bool = True,
                 edge_dim: Optional[int] = None, fill_value="mean",
                 bias: bool = True, residual: bool = False, **kwargs):
        super().__init__()
        # PyG's (source, destination) channels: lin_src and lin_dst, the
        # residual over the destinations; one int: one `lin` for both.
        in_src, in_dst = self._gat_options(kwargs, in_channels, out_channels, heads, concat,
                                           negative_slope, dropout, add_self_loops,
                                           edge_dim, fill_value, residual)
        self.lin = self.lin_src = self.lin_dst = None
        if isinstance(self.in_channels, tuple):
            self.lin_src = Linear(in_src, heads * out_channels, bias=False,
                                  weight_initializer="glorot")
            self.lin_dst = Linear(in_dst, heads * out_channels, bias=False,
                                  weight_initializer="glorot")
        else:
            self.lin = Linear(in_channels, heads * out_channels, bias=False,
                              weight_initializer="glorot")
        self.att_src = torch.nn.Parameter(torch.empty(1, heads, out_channels))
        self.att_dst = torch.nn.Parameter(torch.empty(1, heads, out_channels))
        if edge_dim is not None:
            self.lin_edge = Linear(edge_dim, heads * out_channels, bias=False,
                                   weight_initializer="glorot")
            self.att_edge = torch.nn.Parameter(torch.empty(1, heads, out_channels))
        else:
            self.lin_edge = None
            self.register_parameter("att_edge", None)
        total = out_channels * (heads if concat else 1)
        _common.optional_residual(self, residual, in_dst, total)
        _common.optional_bias(self, bias, total)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for lin in (self.lin, self.lin_src, self.lin_dst):
            if lin is not None:
                lin.reset_parameters()
        if self.lin_edge is not None:
            self.lin_edge.reset_parameters()
        if self.res is not None:
            self.res.reset_parameters()
        _common.glorot(self.att_src)
        _common.glorot(self.att_dst)
        _common.glorot(self.att_edge)
        _common.zeros(self.bias)

    def _sides(self):
        """The Linears reading the sources and the targets (`_pair`)."""
        src, dst = (self.lin, self.lin) if self.lin is not None else \
            (self.lin_src, self.lin_dst)
        return [src], [dst] + ([self.res] if self.res is not None else [])

    @_common.sparse_runs_eagerly
    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Optional[Tensor] = None,
                size=None, return_attention_weights: Optional[bool] = None) -> Tensor:
        plan = _Plan.of(self)
        if plan is not None:
            out = plan.run(self, x, edge_index, edge_attr, size, return_attention_weights)
            if out is not None:
                return out
        name = type(self).__name__
        adj = edge_index
        # Each submodule and parameter read once (Module.__getattr__, some
        # 1 us a read); materialising a lazy weight keeps its object.
        lin, res, bias_p = self.lin, self.res, self.bias
        lin_src, lin_dst = (lin, lin) if lin is not None else (self.lin_src, self.lin_dst)
        weight = lin_src.weight
        att_src, att_dst = self.att_src, self.att_dst
        x_src, x_dst, edge_index, sizes = self._inputs(name, x, edge_index,
                                                       weight.dtype, size)
        if sizes is None:
            _common.check_size(name, size, x.size(0))
        h_, c = self.heads, self.out_channels
        _check_attention_shape(name, h_, c, (("att_src", att_src), ("att_dst", att_dst)))
        if self.lin_edge is None:
            edge_attr = None  # as PyG: edge features without edge_dim are unused
        weights = bool(return_attention_weights)
        self._check_sparse(name, adj, edge_attr, weights)
        if edge_attr is not None:
            edge_attr = _common.check_edge_attr(name, edge_attr, edge_index, self.edge_dim,
                                                x_src)
        dt = _common.compute_dtype(x_src, weight.dtype)
        t = _common._DTYPES[dt]
        scores = _scores_dtype(dt, x_src.device, att_src.dtype, att_dst.dtype,
                               None if edge_attr is None else self.att_edge.dtype)
        atts = (att_src.view(h_, c), att_dst.view(h_, c))
        edge_fn = lambda ea: (self.lin_edge(ea).view(-1, h_, c)  # noqa: E731
                              * self.att_edge).sum(dim=-1)
        if sizes is None:
            # One graph: the projection is in the gnn function
            # (_ir.gat_layer), and the bias where it is added to the heads'
            # concatenation in the layer's own type (PyG adds a float32
            # bias to an autocast result in float32): one op forward and
            # one backward, the weight's and bias's gradients included.
            check_folded_linears(name, (("lin", lin, False),))
            bias = self._bias_in_function(dt, scores, res, bias_p)
            tensors = (x_src, weight) + atts + ((bias_p,) if bias else ())
            head = (int(x_src.size(1)), h_, c, t, self.negative_slope, bias)
            out_dtype = _common.promoted(dt, scores, bias_p.dtype if bias else None)
            if self.lin_edge is None and not weights and size is None and \
                    not _common.is_sparse(adj):
                # (A plan for the next calls: no edge features, no weights.)
                _GatPlan.keep(self, x_src, dt, (("lin", lin),), (lin,), res,
                              (("att_src", att_src), ("att_dst", att_dst), ("bias", bias_p)),
                              bias, head, out_dtype)
            else:
                _Plan.drop(self)
            out = _attention("gat_layer", head,
                             self, x_src, edge_index, h_, *tensors, dtype=dt, scores=scores,
                             weights=weights, edge_attr=edge_attr, edge_fn=edge_fn,
                             out_dtype=out_dtype)
            if bias:
                return self._finished(out, weights, adj, _shape(x_src, sizes))
        else:  # a bipartite graph (docs/Python-nn.md)
            _Plan.drop(self)
            h = lin_src(x_src).view(-1, h_, c)
            h_dst = lin_dst(x_dst).view(-1, h_, c)
            out = _attention("gat_pair", (h_, c, t, self.negative_slope), self, x_src,
                             edge_index, h_, h, h_dst, *atts, dtype=dt, scores=scores,
                             weights=weights, edge_attr=edge_attr, edge_fn=edge_fn,
                             num_nodes=sizes)
        out, attention = self._heads(out, weights, adj, _shape(x_src, sizes))
        out = self._residual_and_bias(x_dst, out)
        return (out, attention) if weights else out


class GATv2Conv(_HeadsLayer):
    r"""PyG's `GATv2Conv` (Brody et al.):
    `alpha_ij = softmax_j(a . leaky_relu(W_l x_j + W_r x_i))`,
    `out_i = concat_h(sum_j alpha_ij W_l x_j) + b`.

    Supported: `heads`, `concat`, `negative_slope`, `dropout` on the attention
    coefficients, `add_self_loops` (as PyG), `edge_dim` with `edge_attr`
    (`W_e e_ji`, projected in PyTorch, is added to `W_l x_j + W_r x_i` in the
    gnn function), `fill_value` (as GATConv), `bias`, `share_weights`,
    `residual`, `flow`, `return_attention_weights` (as GATConv), PyG's
    bipartite form (`(in_src, in_dst)` channels, `forward((x_src, x_dst),
    edge_index)`: lin_l reads the sources, lin_r and the residual the
    targets; self-loops on the first min(num_src, num_dst) nodes;
    docs/Python-nn.md). Lazy `in_channels=-1` works. Parameters: `lin_l.*`, `lin_r.*`, `att`,
    `lin_edge.weight`, `bias`, `res.weight`.
    """

    def __init__(self, in_channels: int, out_channels: int, heads: int = 1,
                 concat: bool = True, negative_slope: float = 0.2,
                 dropout: float = 0.0, add_self_loops: bool = True,
                 edge_dim: Optional[int] = None, fill_value="mean",
                 bias: bool = True, share_weights: bool = False,
                 residual: bool = False, **kwargs):
        super().__init__()
        # PyG's (source, destination) channels: lin_l reads the sources, lin_r
        # and the residual the destinations.
        in_src, in_dst = self._gat_options(kwargs, in_channels, out_channels, heads, concat,
                                           negative_slope, dropout, add_self_loops,
                                           edge_dim, fill_value, residual)
        self.share_weights = share_weights
        self.lin_l = Linear(in_src, heads * out_channels, bias=bias,
                            weight_initializer="glorot")
        if share_weights:
            self.lin_r = self.lin_l
        else:
            self.lin_r = Linear(in_dst, heads * out_channels, bias=bias,
                                weight_initializer="glorot")
        self.att = torch.nn.Parameter(torch.empty(1, heads, out_channels))
        if edge_dim is not None:
            self.lin_edge = Linear(edge_dim, heads * out_channels, bias=False,
                                   weight_initializer="glorot")
        else:
            self.lin_edge = None
        total = out_channels * (heads if concat else 1)
        _common.optional_residual(self, residual, in_dst, total)
        _common.optional_bias(self, bias, total)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.lin_l.reset_parameters()
        self.lin_r.reset_parameters()
        if self.lin_edge is not None:
            self.lin_edge.reset_parameters()
        if self.res is not None:
            self.res.reset_parameters()
        _common.glorot(self.att)
        _common.zeros(self.bias)

    def _sides(self):
        """The Linears reading the sources and the targets (`_pair`)."""
        return [self.lin_l], [self.lin_r] + ([self.res] if self.res is not None else [])

    def _pair(self, name: str, x, edge_index, size=None):
        if self.share_weights and isinstance(x, (tuple, list)) and len(x) == 2 and \
                all(isinstance(t, Tensor) and t.dim() == 2 for t in x) and \
                x[0].size(1) != x[1].size(1):
            raise ValueError(f"{name}: share_weights needs the same channels on both "
                             f"sides, got {x[0].size(1)} and {x[1].size(1)}")
        return super()._pair(name, x, edge_index, size)

    @_common.sparse_runs_eagerly
    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Optional[Tensor] = None,
                return_attention_weights: Optional[bool] = None) -> Tensor:
        plan = _Plan.of(self)
        if plan is not None:
            out = plan.run(self, x, edge_index, edge_attr, None, return_attention_weights)
            if out is not None:
                return out
        name = type(self).__name__
        adj = edge_index
        # Each submodule and parameter read once (Module.__getattr__, some
        # 1 us a read); materialising a lazy weight keeps its object.
        lin_l, lin_r, att, res, bias_p = self.lin_l, self.lin_r, self.att, self.res, self.bias
        weight_l = lin_l.weight
        x_src, x_dst, edge_index, sizes = self._inputs(name, x, edge_index,
                                                       weight_l.dtype)
        h_, c = self.heads, self.out_channels
        _check_attention_shape(name, h_, c, (("att", att),))
        weights = bool(return_attention_weights)
        self._check_sparse(name, adj, edge_attr, weights)
        if edge_attr is not None and self.lin_edge is None:
            raise ValueError(f"{name}: edge_attr needs a layer built with edge_dim")
        if edge_attr is not None:
            edge_attr = _common.check_edge_attr(name, edge_attr, edge_index, self.edge_dim,
                                                x_src)
        dt = _common.compute_dtype(x_src, weight_l.dtype)
        t = _common._DTYPES[dt]
        scores = _scores_dtype(dt, x_src.device, att.dtype)
        edge_fn = lambda ea: self.lin_edge(ea).view(-1, h_, c)  # noqa: E731
        if sizes is None:
            # One graph: lin_l and lin_r are in the gnn function
            # (_ir.gatv2_layer), and the bias as in GATConv.
            check_folded_linears(name, (("lin_l", lin_l, True), ("lin_r", lin_r, True)),
                                 together=True)
            bias_l = lin_l.bias
            lin_bias = bias_l is not None
            # (lin_l's operands without reading them again)
            operands = [weight_l] + ([bias_l] if lin_bias else [])
            if not self.share_weights:
                operands += _common.linear_operands([lin_r])
            bias = self._bias_in_function(dt, scores, res, bias_p)
            tensors = [x_src] + operands + [att.view(h_, c)] + ([bias_p] if bias else [])
            config = (int(x_src.size(1)), h_, c, t, self.negative_slope, lin_bias,
                      self.share_weights, bias)
            out_dtype = _common.promoted(dt, scores, bias_p.dtype if bias else None)
            if edge_attr is None and not weights and not _common.is_sparse(adj):
                # (A plan for the next calls: no edge features, no weights.)
                _Gatv2Plan.keep(self, x_src, dt, (("lin_l", lin_l), ("lin_r", lin_r)),
                                (lin_l,) if self.share_weights else (lin_l, lin_r), res,
                                (("att", att), ("bias", bias_p)), bias, config, out_dtype)
            else:
                _Plan.drop(self)
            out = _attention("gatv2_layer", config, self, x_src, edge_index, h_, *tensors,
                             dtype=dt, scores=scores, weights=weights, edge_attr=edge_attr,
                             edge_fn=edge_fn, out_dtype=out_dtype)
            if bias:
                return self._finished(out, weights, adj, _shape(x_src, sizes))
        else:  # a bipartite graph (docs/Python-nn.md)
            _Plan.drop(self)
            x_l = lin_l(x_src).view(-1, h_, c)
            x_r = lin_r(x_dst).view(-1, h_, c)
            out = _attention("gatv2", (h_, c, t, self.negative_slope), self, x_src, edge_index,
                             h_, x_l, x_r, att.view(h_, c), dtype=dt, scores=scores,
                             weights=weights, edge_attr=edge_attr, edge_fn=edge_fn,
                             num_nodes=sizes)
        out, attention = self._heads(out, weights, adj, _shape(x_src, sizes))
        out = self._residual_and_bias(x_dst, out)
        return (out, attention) if weights else out


class _TransformerPlan(_Plan):
    """A TransformerConv's plan (_plan._Plan) on one graph: its
    transformer_layer function, without edge features or attention
    weights, in float32 or float64, or under autocast in its dtype (the
    result in PyG's dtype, converted inside the function). Besides `_Plan`'s checks: the query, key
    and value Linears (and `lin_skip` where the skip is a plain sum in the
    function) the same objects and each as then; `lin_skip` and `lin_beta`
    the same objects where they run in PyTorch; the options (heads,
    channels, concat, beta, root_weight, dropout, edge_dim) as then; no
    `return_attention_weights`. The attention dropout's mask is drawn anew
    on every training call and the gated skip computed in PyTorch, as on
    the full path. Made only for an edge_index (not a sparse adjacency)."""

    __slots__ = ("head", "skip")
    OPTIONS = ("heads", "out_channels", "concat", "dropout", "beta", "root_weight",
               "edge_dim", "in_channels")
    AUTOCAST = True

    @classmethod
    def keep(cls, module, x: Tensor, dt: torch.dtype, lins: list, skip: bool,
             head: tuple, out_dtype: torch.dtype) -> None:
        """Keeps the plan of this call on `module` where it can stand for
        later ones, else drops any older one: `lins` the Linears whose
        weights (and biases) enter the function in order (query, key, value,
        and the skip where `skip`), `head` its config's first entries,
        `out_dtype` the dtype the function returns its result in
        (`_attention`'s). In a half type only under autocast."""
        if dt in _common._HALVES and _common.autocast_dtype(x.device) != dt:
            _Plan.drop(module)
            return
        modules = module._modules
        linears = tuple(zip(("lin_query", "lin_key", "lin_value", "lin_skip"), lins))
        if not skip:  # (run in PyTorch: the same objects, called as they are)
            linears += (("lin_skip", modules.get("lin_skip")),)
        linears += (("lin_beta", modules.get("lin_beta")),)
        p = cls._make(module, "transformer_layer", dt, x, linears, tuple(lins),
                      results=_common.returned(dt, out_dtype))
        if p is not None:
            p.head, p.skip = head, skip
            p._keep(module)

    def run(self, module, x, edge_index, edge_attr=None, return_attention_weights=None):
        """The layer's output, or None where the plan does not stand for
        this call."""
        if edge_attr is not None or isinstance(return_attention_weights, bool) or \
                not self._stands(module, x, edge_index):
            return None
        tensors = [x.contiguous()]
        if not self._parts_stand(module, tensors):
            return None
        heads, _, concat, p = self.options[:4]
        ei = _common.flip(edge_index, self.flow)
        dropout = module.training and p > 0.0
        if dropout:
            tensors.append(_common.attention_dropout_mask((ei.size(1), heads), p,
                                                          self.dtype, x.device))
        out = self._call(module, self.head + (False, dropout, False, False), ei, x.size(0),
                         tensors)
        if self.skip:
            return out
        return module._skip(x, _heads_out(out, concat), None, False)


class TransformerConv(_HeadsLayer):
    r"""PyG's `TransformerConv` (Shi et al.):
    `alpha_ij = softmax_j((W_q x_i) . (W_k x_j) / sqrt(C))`,
    `out_i = concat_h(sum_j alpha_ij W_v x_j) + W_s x_i`.

    Supported: `heads`, `concat` (else the mean over heads), `beta` (the
    gated skip connection, computed in PyTorch), `dropout` on the attention
    coefficients, `bias`, `root_weight`, `flow`, `return_attention_weights`
    (as PyG, any bool returns `(edge_index, alpha)`, alpha before dropout),
    `edge_dim` with `edge_attr` (`W_e e_ji`, projected in PyTorch, joins the
    keys and the values in the gnn function), PyG's bipartite form
    (`(in_src, in_dst)` channels, `forward((x_src, x_dst), edge_index)`:
    keys and values from the sources, queries and the skip from the
    targets; docs/Python-nn.md). Refused (`NotImplementedError`):
    `edge_attr` without `edge_dim` (lazy `in_channels=-1` works). Parameters:
    `lin_key.*`, `lin_query.*`, `lin_value.*`, `lin_edge.weight`, `lin_skip.*`,
    `lin_beta.weight`.
    """

    def __init__(self, in_channels: int, out_channels: int, heads: int = 1,
                 concat: bool = True, beta: bool = False, dropout: float = 0.0,
                 edge_dim: Optional[int] = None, bias: bool = True,
                 root_weight: bool = True, **kwargs):
        super().__init__()
        name = type(self).__name__
        self.flow = _common.check_kwargs(name, kwargs)
        self.out_channels = _common.check_channels(name, "out_channels", out_channels)
        self.heads = _common.check_heads(name, heads)
        self.beta = beta and root_weight
        self.root_weight = root_weight
        self.concat = concat
        self.dropout = _common.check_dropout(name, dropout)
        self.edge_dim = _common.check_edge_dim(name, edge_dim)
        # PyG's (source, destination) channels: keys and values read the
        # sources, queries and the skip the destinations.
        in_src, in_dst = _common.check_channel_pair(name, in_channels)
        self.in_channels = (tuple(in_channels) if isinstance(in_channels, (tuple, list))
                            else _common.check_channels(name, "in_channels", in_channels))
        self.lin_key = Linear(in_src, heads * out_channels, bias=bias)
        self.lin_query = Linear(in_dst, heads * out_channels, bias=bias)
        self.lin_value = Linear(in_src, heads * out_channels, bias=bias)
        if edge_dim is not None:
            self.lin_edge = Linear(edge_dim, heads * out_channels, bias=False)
        else:
            self.register_parameter("lin_edge", None)
        total = heads * out_channels if concat else out_channels
        self.lin_skip = Linear(in_dst, total, bias=bias)
        if self.beta:
            self.lin_beta = Linear(3 * total, 1, bias=False)
        else:
            self.register_parameter("lin_beta", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.lin_key.reset_parameters()
        self.lin_query.reset_parameters()
        self.lin_value.reset_parameters()
        if self.edge_dim:
            self.lin_edge.reset_parameters()
        self.lin_skip.reset_parameters()
        if self.beta:
            self.lin_beta.reset_parameters()

    def _sides(self):
        """The Linears reading the sources and the targets (`_pair`)."""
        return [self.lin_key, self.lin_value], [self.lin_query, self.lin_skip]

    def _lazy_first(self):
        # PyG's forward projects the queries, then the keys and values.
        return (self.lin_query, self.lin_key, self.lin_value)

    @_common.sparse_runs_eagerly
    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Optional[Tensor] = None,
                return_attention_weights: Optional[bool] = None) -> Tensor:
        plan = _Plan.of(self)
        if plan is not None:
            out = plan.run(self, x, edge_index, edge_attr, return_attention_weights)
            if out is not None:
                return out
        name = type(self).__name__
        adj = edge_index
        # Each submodule and parameter read once (Module.__getattr__, some
        # 1 us a read); materialising a lazy weight keeps its object.
        lin_key, lin_edge, lin_beta = self.lin_key, self.lin_edge, self.lin_beta
        key_weight = lin_key.weight
        x_src, x_dst, edge_index, sizes = self._inputs(name, x, edge_index,
                                                       key_weight.dtype)
        h_, c = self.heads, self.out_channels
        self._check_sparse(name, adj, edge_attr, isinstance(return_attention_weights, bool))
        if edge_attr is not None and lin_edge is None:
            _common.refuse(name, "edge_attr without edge_dim",
                           "PyG adds the raw features to the values")
        if edge_attr is None and lin_edge is not None:
            raise ValueError(f"{name}: a layer built with edge_dim needs edge_attr")
        if edge_attr is not None:
            edge_attr = _common.check_edge_attr(name, edge_attr, edge_index, self.edge_dim,
                                                x_src)
        dt = _common.compute_dtype(x_src, key_weight.dtype)
        t = _common._DTYPES[dt]
        # As PyG: any bool (False too) asks for the weights.
        weights = isinstance(return_attention_weights, bool)
        scores = _scores_dtype(dt, x_src.device)  # (q_i . k_j) / sqrt(C), no parameter
        edge_fn = lambda ea: self.lin_edge(ea).view(-1, h_, c)  # noqa: E731
        if sizes is None:
            # One graph: the whole layer is one gnn function
            # (_ir.transformer_layer): the projections, the attention and,
            # as a plain sum (concat, no beta), the skip; one op forward
            # and one backward, the weights' gradients included.
            skip = self.root_weight and self.concat and lin_beta is None
            lins = [self.lin_query, lin_key, self.lin_value] + \
                ([self.lin_skip] if skip else [])
            check_folded_linears(name, [(a, m, True) for a, m in zip(
                ("lin_query", "lin_key", "lin_value", "lin_skip"), lins)], together=True)
            bias = lin_key.bias is not None
            tensors = [x_src] + _common.linear_operands(lins)
            config = (int(x_src.size(1)), h_, c, t, bias, skip)
            if edge_attr is None and not weights and not _common.is_sparse(adj):
                # (A plan for the next calls: no edge features, no weights.)
                _TransformerPlan.keep(self, x_src, dt, lins, skip, config,
                                      _common.promoted(dt, scores))
            else:
                _Plan.drop(self)
            out = _attention("transformer_layer", config, self, x_src, edge_index, h_,
                             *tensors, dtype=dt, scores=scores, weights=weights,
                             edge_attr=edge_attr, edge_fn=edge_fn)
            if skip:
                return self._finished(out, weights, adj, _shape(x_src, sizes))
            out, attention = self._heads(out, weights, adj, _shape(x_src, sizes))
            return self._skip(x_dst, out, attention, weights)
        _Plan.drop(self)
        q = self.lin_query(x_dst).view(-1, h_, c)
        k = self.lin_key(x_src).view(-1, h_, c)
        v = self.lin_value(x_src).view(-1, h_, c)
        # A bipartite graph (docs/Python-nn.md).
        out = _attention("transformer", (h_, c, t), self, x_src, edge_index, h_, q, k, v,
                         dtype=dt, scores=scores, weights=weights, edge_attr=edge_attr,
                         edge_fn=edge_fn, num_nodes=sizes, extra_config=(True,))
        out, attention = self._heads(out, weights, adj, _shape(x_src, sizes))
        return self._skip(x_dst, out, attention, weights)

    def _skip(self, x_dst: Tensor, out: Tensor, attention, weights: bool):
        """The skip connection (gated with beta) added in PyTorch."""
        if self.root_weight:
            x_r = self.lin_skip(x_dst)
            if self.lin_beta is not None:
                beta = self.lin_beta(torch.cat([out, x_r, out - x_r], dim=-1)).sigmoid()
                out = beta * x_r + (1 - beta) * out
            else:
                out = out + x_r
        return (out, attention) if weights else out
