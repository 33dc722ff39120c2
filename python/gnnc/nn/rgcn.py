"""PyG's `RGCNConv` (relational GCN, Schlichtkrull et al.) with all relations
in one pass over the edges.

PyG loops over the relations: per relation a masked copy of the edges, an
aggregation and a matmul (`R` of each per call, and the `R` aggregated
`[N, in]` tensors kept for the backward). Here the relations are a property of
the graph (a typed graph: its edge types travel with it, `!gnn.graph<typed>`):
every node's features are transformed by every relation's weight at once (one
matmul, `[N, R, out]`), and one gnnc edge pass reads each edge's row of its
(source, relation) pair, scales it (mean: by the destination's in-edge count
of that relation) and sums it into the destination; the backward adds each
edge's term into the gradient's row of that pair. Nothing edge-sized but the
scales is kept. docs/Python-nn.md, "Relational layers".
"""

from typing import Optional

import torch
from torch import Tensor

from . import _common
from .. import _core

_AGGR = {"mean": True, "add": False, "sum": False}


class RGCNConv(torch.nn.Module):
    r"""PyG's `RGCNConv`:
    `out_i = W_root x_i + b + sum_r sum_{j in N_r(i)} (1 / c_{i,r}) W_r x_j`,
    `c_{i,r}` the number of edges of relation `r` entering `i` (mean; 1 for
    sum).

    Supported: `num_bases` (basis decomposition), `num_blocks`
    (block-diagonal decomposition), `aggr` in 'mean', 'add'/'sum',
    `root_weight`, `bias`, `is_sorted` (accepted, not needed), `flow`,
    featureless input (`x` None or a node index tensor: rows of the weights
    as node embeddings, as PyG), a `(x_src, x_dst)` pair with
    `in_channels=(in_src, in_dst)`, a torch_sparse.SparseTensor `adj_t`
    whose values are the relation ids in place of `edge_index` and
    `edge_type` (PyG's form). Refused (`NotImplementedError`): other
    aggregations, a torch.sparse adjacency (PyG's layer cannot take one
    either). Parameters as PyG's: `weight`,
    `comp` (bases), `root`, `bias`.

    Mean is per relation (the paper's `c_{i,r}`), as PyG's loop over the
    relations computes it; PyG's `segment_matmul` path (taken with pyg-lib
    installed, no bases, float inputs) divides by the whole in-degree
    instead.
    """

    def __init__(self, in_channels, out_channels: int, num_relations: int,
                 num_bases: Optional[int] = None, num_blocks: Optional[int] = None,
                 aggr: str = "mean", root_weight: bool = True, is_sorted: bool = False,
                 bias: bool = True, **kwargs):
        super().__init__()
        name = type(self).__name__
        self.flow = _common.check_kwargs(name, kwargs, aggr_default=aggr)
        if not isinstance(aggr, str) or aggr not in _AGGR:
            _common.refuse(name, f"aggr={aggr!r}", "only 'mean', 'add' and 'sum'")
        if num_bases is not None and num_blocks is not None:
            raise ValueError("Can not apply both basis-decomposition and "
                             "block-diagonal-decomposition at the same time.")
        in_l, in_r = _common.check_channel_pair(name, in_channels)
        if in_l <= 0 or in_r <= 0:
            raise ValueError(f"{name}: in_channels must be positive (PyG's layer has "
                             f"no lazy initialization), got {in_channels!r}")
        self.in_channels = in_channels
        self.out_channels = _common.check_channels(name, "out_channels", out_channels)
        self.num_relations = _positive(name, "num_relations", num_relations)
        self.num_bases = None if num_bases is None else \
            _positive(name, "num_bases", num_bases)
        self.num_blocks = None if num_blocks is None else \
            _positive(name, "num_blocks", num_blocks)
        self.aggr = aggr
        self.is_sorted = is_sorted
        self.in_channels_l = in_l
        r = self.num_relations
        if self.num_bases is not None:
            self.weight = torch.nn.Parameter(torch.empty(self.num_bases, in_l, out_channels))
            self.comp = torch.nn.Parameter(torch.empty(r, self.num_bases))
        elif self.num_blocks is not None:
            b = self.num_blocks
            if in_l % b or out_channels % b:
                raise ValueError(f"{name}: in_channels ({in_l}) and out_channels "
                                 f"({out_channels}) must be divisible by num_blocks "
                                 f"({b})")
            self.weight = torch.nn.Parameter(
                torch.empty(r, b, in_l // b, out_channels // b))
            self.register_parameter("comp", None)
        else:
            self.weight = torch.nn.Parameter(torch.empty(r, in_l, out_channels))
            self.register_parameter("comp", None)
        if root_weight:
            self.root = torch.nn.Parameter(torch.empty(in_r, out_channels))
        else:
            self.register_parameter("root", None)
        if bias:
            self.bias = torch.nn.Parameter(torch.empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _common.glorot(self.weight)
        _common.glorot(self.comp)
        _common.glorot(self.root)
        _common.zeros(self.bias)

    @_common.names_graph_errors
    def forward(self, x, edge_index: Tensor, edge_type: Optional[Tensor] = None) -> Tensor:
        name = type(self).__name__
        if isinstance(x, (tuple, list)) and len(x) != 2:
            raise ValueError(f"{name}: expected x as a (source, target) pair, got "
                             f"{len(x)} items")
        x_l, x_r = tuple(x) if isinstance(x, (tuple, list)) else (x, x)
        if x_l is None:
            # One arange per size and device: the rows cached per
            # (edge_index, edge_type, index) are found again next call.
            x_l = _arange(self.in_channels_l, self.weight.device)
            if not isinstance(x, (tuple, list)):
                x_r = x_l
        featured = _check_x(name, "x" if x_r is x_l else "x[0]", x_l, self.in_channels_l,
                            self.weight)
        if x_r is not x_l:
            if not isinstance(x_r, Tensor):
                raise TypeError(f"{name}: expected the target features x[1] to be a "
                                f"torch.Tensor, got {type(x_r).__name__}")
            if _check_x(name, "x[1]", x_r, None, self.weight) != featured:
                raise TypeError(f"{name}: x[0] and x[1] must both be features or both "
                                f"node indices")
        if featured and self.root is not None and x_r.size(1) != self.root.size(0):
            raise ValueError(f"{name}: expected target features with "
                             f"{self.root.size(0)} channels, got {x_r.size(1)}")
        if not featured and self.num_blocks is not None:
            raise ValueError("Block-diagonal decomposition not supported for "
                             "non-continuous input features.")
        if _common.is_sparse(edge_index):
            edge_index, edge_type = _sparse_graph(name, edge_index, edge_type, x_l, x_r,
                                                  self.flow)
        ei = _check_graph(name, edge_index, edge_type, x_l.device)
        ei = _common.flip(ei, self.flow)
        sizes = (x_l.size(0), x_r.size(0))
        r, out_c = self.num_relations, self.out_channels

        weight = self.weight
        if self.num_bases is not None:
            weight = (self.comp @ weight.view(self.num_bases, -1)).view(
                r, self.in_channels_l, out_c)
        mean = _AGGR[self.aggr]
        # The pass runs in the autocast type under autocast (its backward sums
        # each (source, relation) row in f32 and rounds it once).
        dt = _common.compute_dtype(x_l, self.weight.dtype) if featured else weight.dtype
        span = _span(sizes[0] * out_c * dt.itemsize, r)
        # (1 / c_{i,r} made in dt once per graph: no cast per call.)
        graph, norm, spans = relation_edges(ei, edge_type, r, sizes, mean, dt, span, name)
        index = None if featured else self._source_rows(x_l)
        if index is not None:
            _check_index(name, index, self.in_channels_l, *self._index_names(x_r is x_l))
            if self.root is not None and x_r is not index:
                # The root term reads root[x_r].
                _check_index(name, x_r, self.root.size(0),
                             "the node index x" if x_r is x_l else "the target index x[1]",
                             "in_channels" if x_r is x_l else "in_channels[1]")
        n = sizes[0] if sizes[0] == sizes[1] else sizes
        # A Python bool (sizes[0] != sizes[1] is a SymBool when compiled with
        # dynamic shapes, which the IR builder refuses).
        config = (out_c, _common._DTYPES[dt], mean, isinstance(n, tuple))

        def rows(r0: int, r1: int) -> Tensor:
            """Every source's row under relations [r0, r1): [N_src, r1 - r0, out]."""
            if featured:
                h = _transform(x_l, weight[r0:r1], self.num_blocks)
            else:
                # PyG's weight[r, index[j]]: the weight rows of the sources' ids.
                h = weight[r0:r1].index_select(1, index).transpose(0, 1)
            return _common.cast(dt, h.reshape(sizes[0], r1 - r0, out_c))

        if spans is None:
            args = (rows(0, r),) + ((norm,) if mean else ())
            out = _common.propagate(self, "rgcn", (out_c, r) + config[1:], graph, n,
                                    *args)
        else:
            # Relations in spans of `span` (the edges sorted by relation, a
            # typed graph per span, ids from the span's first): one pass each.
            out = None
            for r0, r1, g, w in spans:
                args = (rows(r0, r1),) + ((w,) if mean else ())
                part = _common.propagate(self, "rgcn", (out_c, r1 - r0) + config[1:],
                                         g, n, *args)
                out = part if out is None else out + part
            if out is None:
                out = x_l.new_zeros((sizes[1], out_c), dtype=dt)

        if self.root is not None:
            out = out + (x_r @ self.root if featured else self.root[x_r])
        if self.bias is not None:
            out = out + self.bias
        return _common.as_dtype(out, self._pyg_dtype(out.dtype, dt, mean, x_l.device))

    def _pyg_dtype(self, dtype: torch.dtype, dt: torch.dtype, mean: bool,
                   device: torch.device) -> torch.dtype:
        """The dtype of PyG's result where gnnc's is `dtype` (the pass ran
        in `dt`): PyG sums the relations into `torch.zeros` of the default
        dtype (float32 also for a layer in a half type, with or without
        autocast)."""
        return _common.promoted(dtype, torch.get_default_dtype())

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.in_channels}, {self.out_channels}, "
                f"num_relations={self.num_relations})")

    def _source_rows(self, x_l: Tensor) -> Tensor:
        """Featureless input: the weight row each source reads (PyG's
        `weight[r, x_l]`)."""
        return x_l

    def _index_names(self, one_set: bool) -> tuple:
        """What `_source_rows` returns and the bound it must stay below,
        named for the error message."""
        return ("the node index x" if one_set else "the source index x[0]",
                "in_channels" if one_set else "in_channels[0]")


class FastRGCNConv(RGCNConv):
    r"""PyG's `FastRGCNConv`: `RGCNConv`'s layer, parameters and result
    (PyG's version gathers a weight matrix per edge, for speed at the cost
    of memory; here both run the same one-pass computation). As PyG's, a
    featureless node index `x` selects the weight row of each edge's source
    id (`weight[r, j]`), not of `x[j]`; the root term reads `root[x]`."""

    def _source_rows(self, x_l: Tensor) -> Tensor:
        return _arange(x_l.size(0), x_l.device)

    def _pyg_dtype(self, dtype: torch.dtype, dt: torch.dtype, mean: bool,
                   device: torch.device) -> torch.dtype:
        """PyG's FastRGCNConv starts from the messages, in `dt`; its mean
        scales them by `1 / count`, float32 under CUDA's autocast."""
        return _common.promoted(dtype, _common.widened(dt, device)) if mean else dtype

    def _index_names(self, one_set: bool) -> tuple:
        return ("the source node ids (featureless, each source reads its own id's "
                "weight row)", "in_channels: more source nodes than weight rows")


_ARANGES = {}


def _arange(n: int, device: torch.device) -> Tensor:
    """One `arange(n)` tensor per (n, device), so what is cached per input
    tensor (the edges' rows) is found again on the next call."""
    t = _ARANGES.get((n, device))
    if t is None:
        _core._evict_oldest(_ARANGES, 8)
        t = _ARANGES[(n, device)] = torch.arange(n, device=device)
    return t


def _check_index(layer: str, index: Tensor, embeddings: int, what: str,
                 bound: str) -> None:
    """A featureless node index in [0, embeddings) (`what` and `bound`
    name the index and the bound in the error), checked once per index
    tensor (one read back; again when it is written). Not under
    torch.compile."""
    if torch.compiler.is_compiling() or index.is_meta or not index.numel():
        return

    def check():
        lo, hi = (int(v) for v in torch.stack([index.min(), index.max()]).tolist())
        if lo < 0 or hi >= embeddings:
            raise ValueError(f"{layer}: {what} holds {lo if lo < 0 else hi}, outside "
                             f"[0, {embeddings}) ({bound})")
        return True

    _common._derived(index, ("rgcn_index", embeddings), check)


def _positive(layer: str, what: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{layer}: {what} must be a positive int, got {value!r}")
    return value


def _check_x(layer: str, what: str, x, channels: Optional[int], weight: Tensor) -> bool:
    """Whether `x` is a float feature matrix [N, channels] (True) or a node
    index vector [N] (False, PyG's featureless input); anything else raises."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{layer}: expected {what} to be a torch.Tensor or None, got "
                        f"{type(x).__name__}")
    if x.device != weight.device:
        raise ValueError(f"{layer}: {what} is on {x.device} but the layer's parameters "
                         f"are on {weight.device}")
    if x.is_floating_point():
        if x.dim() != 2 or (channels is not None and x.size(1) != channels):
            raise ValueError(f"{layer}: expected {what} of shape [num_nodes, "
                             f"{channels if channels else 'channels'}]"
                             f"{' (in_channels)' if channels else ''}, got "
                             f"{tuple(x.shape)}")
        if not _common.compatible(x.dtype, weight.dtype, x.device):
            raise TypeError(f"{layer}: {what} is {x.dtype} but the layer's parameters "
                            f"are {weight.dtype}; convert one of them, or run the "
                            f"layer under torch.autocast")
        return True
    if x.dtype not in (torch.int64, torch.int32) or x.dim() != 1:
        raise TypeError(f"{layer}: expected {what} to be float features [N, C] or a "
                        f"node index tensor [N] (int64), got {x.dtype} of shape "
                        f"{tuple(x.shape)}")
    return False


def _sparse_graph(layer: str, adj, edge_type, x_l: Tensor, x_r: Tensor, flow: str):
    """PyG's other graph argument: a torch_sparse.SparseTensor adj_t
    [num_dst, num_src] whose values are the edges' relation ids (PyG's
    RGCNConv reads edge_type there). (edge_index, edge_type) in its entry
    order. A torch.sparse tensor is refused, as PyG's layer cannot take one
    either (it masks it per relation as an edge_index)."""
    if not _common._is_sparse_tensor(adj):
        _common.refuse(layer, f"a {adj.layout} adjacency",
                       "pass a torch_sparse.SparseTensor adj_t whose values are the "
                       "relation ids (PyG's form), or edge_index [2, E] and edge_type [E]")
    if edge_type is not None:
        raise ValueError(f"{layer}: with a SparseTensor adjacency the relation ids are "
                         f"its values; pass edge_type=None (PyG would ignore it)")
    edge_index, values, (ns, nd) = _common.sparse_edges(layer, adj, flow, x_l.device,
                                                        duplicates="entries")
    if values is None:
        raise ValueError(f"{layer}: the SparseTensor adjacency has no values; they "
                         f"must be the edges' relation ids")
    if (ns, nd) != (x_l.size(0), x_r.size(0)):
        raise ValueError(f"{layer}: the adjacency is {nd} x {ns} (targets x sources) "
                         f"but the inputs have {x_l.size(0)} sources and "
                         f"{x_r.size(0)} targets")
    return edge_index, values


def _check_graph(layer: str, edge_index, edge_type, device: torch.device) -> Tensor:
    _common.check_edge_index(layer, edge_index)
    if not isinstance(edge_type, Tensor):
        raise TypeError(f"{layer}: expected edge_type, a torch.Tensor [E] of "
                        f"relation ids, got {type(edge_type).__name__}")
    if edge_type.dtype not in (torch.int64, torch.int32) or \
            tuple(edge_type.shape) != (edge_index.size(1),):
        raise ValueError(f"{layer}: expected edge_type of shape [{edge_index.size(1)}] "
                         f"(one relation id per edge, int64), got {edge_type.dtype} of "
                         f"shape {tuple(edge_type.shape)}")
    for what, t in (("edge_index", edge_index), ("edge_type", edge_type)):
        if t.device != device:
            raise ValueError(f"{layer}: x is on {device} but {what} is on {t.device}; "
                             f"move both to one device")
    return edge_index


# The transformed features of the sources, [N, R, out], are made this many
# bytes at a time at most (eager mode): past it the relations go in spans, the
# edges sorted by relation (once per graph), so the memory stays that of one
# span rather than N * R * out. Under torch.compile: one span.
_SPAN_BYTES = 1 << 30


def _span(row_bytes: int, num_relations: int) -> int:
    """Relations per span: as many as fit _SPAN_BYTES at `row_bytes` per
    relation, at least one."""
    if torch.compiler.is_compiling():
        return num_relations
    return max(1, min(num_relations, _SPAN_BYTES // max(1, row_bytes)))


def _transform(x: Tensor, weight: Tensor, blocks: Optional[int]) -> Tensor:
    """Every node's features under every relation's weight: [N, R * out]
    (relation-major within a row). `weight`: [R, in, out], or with `blocks`
    [R, blocks, in / blocks, out / blocks] (block-diagonal)."""
    n = x.size(0)
    if blocks is None:
        r, i, o = weight.shape
        return x @ weight.permute(1, 0, 2).reshape(i, r * o)
    r, b, i, o = weight.shape
    return torch.einsum("nbi,rbio->nrbo", x.reshape(n, b, i), weight).reshape(n, r * b * o)


# --------------------------------------------------------------------------
# The typed graph and the edges' weights, cached per (edge_index, edge_type).
# --------------------------------------------------------------------------

def _build(edge_index: Tensor, edge_type: Tensor, num_relations: int, sizes: tuple,
           mean: bool, dtype: torch.dtype, span: int, layer: str):
    """(graph, norm [E] of `dtype`: 1 / the in-edges of its relation at its
    destination, empty without `mean`, spans: None, or with `span` <
    num_relations a (first relation, end relation, graph, norm) per span of
    `span` relations that has edges). The graph is a private typed copy of
    `edge_index` with `edge_type` (each span's: its edges, relation ids from
    the span's first): the op's results are poisoned when either input
    changes behind PyTorch's version counter (_common._derived), and gnnc's
    graph cache does not check its contents again. Ids are checked here,
    once per graph (one read back)."""
    ei = edge_index.long()
    et = edge_type.long()
    dst = ei[1]
    if ei.size(1):
        hint = " (x.size(0); in_channels when x is None or a node index)"
        lo_t, hi_t = _core._check_ids(ei, sizes if sizes[0] != sizes[1] else sizes[0],
                                      et.min(), et.max(), hint=hint)
        if lo_t < 0 or hi_t >= num_relations:
            raise ValueError(f"{layer}: edge_type holds relation "
                             f"{lo_t if lo_t < 0 else hi_t}, outside [0, "
                             f"{num_relations}) (num_relations)")
    if not mean:
        norm = torch.empty(0, dtype=dtype, device=ei.device)
    else:
        # c_{i,r}: the edges sharing an edge's (destination, relation),
        # counted by sorting; no [N * R] table.
        pair = dst * num_relations + et
        ordered = pair.sort().values
        count = torch.searchsorted(ordered, pair, right=True) - \
            torch.searchsorted(ordered, pair)
        # (Outside autocast: CUDA's autocast makes `1 / t` float32.)
        with torch.autocast(ei.device.type, enabled=False):
            norm = 1.0 / count.to(dtype)
    if span >= num_relations:
        return _core._private_copy(edge_index, et), norm, None
    # Spans of `span` relations: the edges sorted by relation, a typed
    # graph per span.
    et, perm = et.sort(stable=True)
    counts = torch.bincount(et // span, minlength=-(-num_relations // span)).tolist()
    spans, e0 = [], 0
    for j, c in enumerate(counts):
        if c:
            r0 = j * span
            rows = perm[e0:e0 + c]
            g = _core._private_copy(ei.index_select(1, rows), et[e0:e0 + c] - r0)
            spans.append((r0, min(num_relations, r0 + span), g,
                          norm.index_select(0, rows) if mean else norm))
        e0 += c
    return None, norm, tuple(spans)


def _cached(edge_index, edge_type, num_relations, sizes, mean, dtype, span, layer):
    return _common._derived((edge_index, edge_type),
                            ("rgcn", num_relations, sizes, mean, dtype, span),
                            lambda: _build(edge_index, edge_type, num_relations,
                                           sizes, mean, dtype, span, layer))


# Outside CUDA graphs (it hands out cached tensors and checks its inputs on
# every call), as gnnc_nn::self_loops.
@torch.library.custom_op("gnnc_nn::rgcn_edges", mutates_args=(),
                         tags=_core._NOT_IN_CUDA_GRAPHS)
def _edges_op(edge_index: Tensor, edge_type: Tensor, num_relations: int, num_src: int,
              num_dst: int, mean: bool, dtype: torch.dtype,
              layer: str) -> tuple[Tensor, Tensor]:
    return _cached(edge_index, edge_type, num_relations, (num_src, num_dst), mean,
                   dtype, num_relations, layer)[:2]


@_edges_op.register_fake
def _(edge_index, edge_type, num_relations, num_src, num_dst, mean, dtype, layer):
    e = edge_index.size(1)
    return (edge_index.new_empty((2, e), dtype=torch.int64),
            edge_index.new_empty((e if mean else 0,), dtype=dtype))


def relation_edges(edge_index: Tensor, edge_type: Tensor, num_relations: int,
                   sizes: tuple, mean: bool, dtype: torch.dtype = torch.float32,
                   span: Optional[int] = None, layer: str = "RGCNConv"):
    """(graph, norm, spans) of `_build`, cached per (edge_index, edge_type)
    tensors: one contents check of each per call (errors name `layer`)."""
    span = num_relations if span is None else span
    if torch.compiler.is_compiling() or edge_index.is_meta:
        graph, norm = _edges_op(edge_index, edge_type, num_relations, sizes[0],
                                sizes[1], mean, dtype, layer)
        return graph, norm, None
    return _cached(edge_index, edge_type, num_relations, sizes, mean, dtype, span, layer)
