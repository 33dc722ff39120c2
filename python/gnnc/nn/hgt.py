"""HGT: a drop-in replacement of PyG's `HGTConv` (heterogeneous graph
transformer) whose attention over every edge type runs as one compiled `gnn`
function (the Graph Transformer's, see `_ir.transformer`) on the
concatenated bipartite graph; the per-type projections stay in PyTorch."""

import json
from typing import Dict, List, Mapping, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor

from gnnc import _core

from . import _common
from ._common import Linear

_NAME = "HGTConv"

# torch.nn.ParameterDict's own attributes: PyG's ParameterDict writes such a
# key as "<key>" (torch would refuse it).
_PARAMETER_DICT_ATTRS = frozenset(dir(torch.nn.ParameterDict))


def _parameter_key(key: str) -> str:
    """The name PyG's `ParameterDict` stores `key` under (`skip`, `p_rel`):
    '<key>' for one of ParameterDict's attributes, dots written as '#'."""
    if key in _PARAMETER_DICT_ATTRS:
        key = f"<{key}>"
    return key.replace(".", "#")


class _HeteroDictLinear(torch.nn.Module):
    """PyG's `HeteroDictLinear`: one `Linear` per type (`lins.<type>.weight`
    [out, in], `lins.<type>.bias` [out]), applied to the types of an input
    dict that it has, in its own type order. `in_channels` -1 for a type is
    lazy: sized (and, as PyG, initialised twice) by the first input."""

    def __init__(self, in_channels: Dict[str, int], out_channels: int):
        super().__init__()
        self.in_channels = dict(in_channels)
        self.out_channels = out_channels
        self.lins = torch.nn.ModuleDict({
            key: Linear(channels, out_channels) for key, channels in in_channels.items()})
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for lin in self.lins.values():
            lin.reset_parameters()

    def materialize(self, x_dict: Mapping[str, Tensor]) -> None:
        """Sizes the lazy `Linear`s of the types in `x_dict` (in its order,
        PyG's forward pre-hook)."""
        for key, x in x_dict.items():
            lin = self.lins[key] if key in self.lins else None
            if lin is not None and lin.is_lazy():
                lin.materialize(x.size(-1))
                lin.reset_parameters()  # PyG initialises it twice
                self.in_channels[key] = x.size(-1)

    def forward(self, x_dict: Mapping[str, Tensor]) -> Dict[str, Tensor]:
        return {key: lin(x_dict[key]) for key, lin in self.lins.items() if key in x_dict}

    def __repr__(self) -> str:
        return f"HeteroDictLinear({self.in_channels}, {self.out_channels}, bias=True)"


class _HeteroLinear(torch.nn.Module):
    """PyG's `HeteroLinear` without bias: one `[in, out]` matrix per type,
    `weight` [num_types, in, out] (x @ weight[type]), kaiming-uniform
    initialised over `in_channels`."""

    def __init__(self, in_channels: int, out_channels: int, num_types: int):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_types = num_types
        self.weight = torch.nn.Parameter(torch.empty(num_types, in_channels, out_channels))
        self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = (6 / ((1 + 5) * self.in_channels)) ** 0.5  # kaiming, a = sqrt(5)
        with torch.no_grad():
            self.weight.uniform_(-bound, bound)

    def __repr__(self) -> str:
        return (f"HeteroLinear({self.in_channels}, {self.out_channels}, "
                f"num_types={self.num_types}, bias=False)")


class HGTConv(torch.nn.Module):
    r"""PyG's `HGTConv` (Hu et al., heterogeneous graph transformer). Per node
    type `k, q, v = kqv_lin[type](x)` (`heads` heads of `D = out_channels /
    heads`); per edge type `r` and head `h` the sources' keys and values
    are transformed by `k_rel`/`v_rel` (`[D, D]` each); then, over all edge
    types together,
    `alpha_ij = softmax_j((q_i . k_j) * p_rel[r, h] / sqrt(D))`,
    `out_i = sum_j alpha_ij v_j`, and per destination type
    `a = out_lin[type](gelu(out))`, blended with the input as
    `sigmoid(skip[type]) a + (1 - sigmoid(skip[type])) x` where the channels
    match.

    The attention runs as one gnnc call (the `transformer` function) on the
    concatenation of every edge type's graph (PyG's
    `construct_bipartite_edge_index`, cached per tuple of edge_index
    tensors), `p_rel` folded into the keys; the projections run in PyTorch.
    `forward(x_dict, edge_index_dict)` returns PyG's dict: the destination
    node types of `metadata` present in `x_dict`. Lazy `in_channels=-1` (or
    -1 per type) works. An edge type's graph may be a sparse adjacency
    [num_dst, num_src] (PyG's adj_t, values ignored as PyG ignores them).
    Refused: MessagePassing keywords other than `aggr='add'` and
    `decomposed_layers` (`NotImplementedError`). Parameters: `kqv_lin.lins.<type>.*`,
    `out_lin.lins.<type>.*`, `k_rel.weight`, `v_rel.weight`, `skip.<type>`,
    `p_rel.<src>__<rel>__<dst>` (names and shapes as PyG's).
    """

    def __init__(self, in_channels, out_channels: int, metadata, heads: int = 1,
                 **kwargs):
        super().__init__()
        flow = _common.check_kwargs(_NAME, kwargs)
        if flow != "source_to_target":
            _common.refuse(_NAME, f"flow={flow!r}", "HGTConv's graphs are bipartite")
        self.out_channels = _common.check_channels(_NAME, "out_channels", out_channels)
        self.heads = _common.check_heads(_NAME, heads)
        if out_channels % heads != 0:
            raise ValueError(f"{_NAME}: out_channels (got {out_channels}) must be "
                             f"divisible by the number of heads (got {heads})")
        node_types, edge_types = _check_metadata(metadata)
        if isinstance(in_channels, Mapping):
            in_channels = dict(in_channels)
        else:
            in_channels = {t: in_channels for t in node_types}
        for key, c in in_channels.items():
            if isinstance(c, bool) or not isinstance(c, int) or (c <= 0 and c != -1):
                raise ValueError(f"{_NAME}: in_channels[{key!r}] must be a positive int "
                                 f"or -1 (lazy), got {c!r}")
        self.in_channels = in_channels
        self.node_types = node_types
        self.edge_types = edge_types
        self.edge_types_map = {t: i for i, t in enumerate(edge_types)}
        # The edge types as gnnc_nn::hgt_graph takes them (its errors name them).
        self._edge_types_text = _encode_names(edge_types)
        self.dst_node_types = {t[-1] for t in edge_types}
        self.kqv_lin = _HeteroDictLinear(in_channels, 3 * out_channels)
        self.out_lin = _HeteroDictLinear({t: out_channels for t in node_types},
                                         out_channels)
        dim = out_channels // heads
        self.k_rel = _HeteroLinear(dim, dim, heads * len(edge_types))
        self.v_rel = _HeteroLinear(dim, dim, heads * len(edge_types))
        # As PyG: `skip` made from a dict (torch sorts its keys), `p_rel`
        # filled in the edge types' order (parameter and state dict order).
        self.skip = torch.nn.ParameterDict({
            _parameter_key(t): torch.nn.Parameter(torch.empty(1)) for t in node_types})
        self.p_rel = torch.nn.ParameterDict()
        for t in edge_types:
            self.p_rel[_parameter_key("__".join(t))] = torch.nn.Parameter(
                torch.empty(1, heads))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.kqv_lin.reset_parameters()
        self.out_lin.reset_parameters()
        self.k_rel.reset_parameters()
        self.v_rel.reset_parameters()
        with torch.no_grad():
            for p in list(self.skip.values()) + list(self.p_rel.values()):
                p.fill_(1.0)

    def forward(self, x_dict: Mapping[str, Tensor],
                edge_index_dict: Mapping[Tuple[str, str, str], Tensor]
                ) -> Dict[str, Tensor]:
        if isinstance(edge_index_dict, Mapping) and \
                any(_common.is_sparse(a) for a in edge_index_dict.values()):
            # Dynamo does not trace sparse tensors: outside the traced graph,
            # as the one-graph layers run with a sparse adjacency.
            return _common._eagerly(self._forward, x_dict, edge_index_dict)
        return self._forward(x_dict, edge_index_dict)

    def _forward(self, x_dict: Mapping[str, Tensor],
                 edge_index_dict: Mapping[Tuple[str, str, str], Tensor]
                 ) -> Dict[str, Tensor]:
        h_, f_ = self.heads, self.out_channels
        d = f_ // h_
        self.kqv_lin.materialize(_check_features(self, x_dict))
        relations, edge_index_dict = _check_relations(self, x_dict, edge_index_dict)
        # Destination rows: every node type the layer projects, in its order.
        kqv = self.kqv_lin(x_dict)
        x0 = x_dict[next(iter(kqv))]
        counts = {t: x_dict[t].size(0) for t in kqv}
        dst_off = _offsets(counts)
        num_dst = sum(counts.values())
        kqv_all = torch.cat(list(kqv.values())).view(-1, 3, h_, d)
        q = kqv_all[:, 1]
        k, v, src_off, num_src = self._relation_keys_values(kqv_all, dst_off, counts,
                                                            relations)
        # Per edge type: (edge type, its first key row, source count, its
        # destination type's first query row, destination count).
        layout = tuple((r, src_off[r], counts[r[0]], dst_off[r[-1]], counts[r[-1]])
                       for r in relations)
        dt = _common.compute_dtype(x0, self.kqv_lin.lins[next(iter(kqv))].weight.dtype)
        # One bipartite graph (docs/Python-nn.md): the destination types'
        # queries, the source types' keys and values.
        q, k, v = _common.operands(dt, q, k, v)
        if relations:
            edge_index = _bipartite_graph(self, [edge_index_dict[r] for r in relations],
                                          layout, num_src, num_dst)
            out = _common.propagate(self, "transformer",
                                    (h_, d, _common._DTYPES[dt], False, False, False,
                                     False, True),
                                    edge_index, (num_src, num_dst), q, k, v)
        else:  # no edge type at all: nothing is aggregated
            out = q.new_zeros((num_dst, h_, d))
        out = F.gelu(out.flatten(1))
        result = {}
        for t in kqv:
            if t not in self.dst_node_types:
                continue
            a = self.out_lin.lins[t](out[dst_off[t]:dst_off[t] + counts[t]])
            x = x_dict[t]
            if a.size(-1) == x.size(-1):
                alpha = self.skip[_parameter_key(t)].sigmoid()
                a = alpha * a + (1 - alpha) * x
            result[t] = a
        return result

    def _relation_keys_values(self, kqv_all: Tensor, dst_off: Dict[str, int],
                              counts: Dict[str, int], relations: List[tuple]):
        """The source rows of the concatenated graph: per edge type `r` the
        keys `k_rel[r](k_src) * p_rel[r]` and values `v_rel[r](v_src)` of its
        source type's nodes, grouped by source type (one einsum per source
        type for all its edge types). Returns (k, v [num_src, H, D], the
        first row of each edge type, num_src)."""
        h_, d = self.heads, self.out_channels // self.heads
        e_ = len(self.edge_types)
        by_source: Dict[str, List[tuple]] = {}
        for r in relations:
            by_source.setdefault(r[0], []).append(r)
        w_k = self.k_rel.weight.view(h_, e_, d, d)
        w_v = self.v_rel.weight.view(h_, e_, d, d)
        ks, vs, src_off, row = [], [], {}, 0
        for s, rels in by_source.items():
            idx = [self.edge_types_map[r] for r in rels]
            # p_rel[r, h] scales head h's keys of edge type r: folded into
            # the columns of k_rel[r, h] (each source row belongs to one r).
            p = torch.cat([self.p_rel[_parameter_key("__".join(r))] for r in rels])
            wk = w_k[:, idx] * p.t().reshape(h_, len(rels), 1, 1)
            wv = w_v[:, idx]
            n = counts[s]
            src = kqv_all[dst_off[s]:dst_off[s] + n]
            # [N, H, D] x [H, R, D, D] -> [R, N, H, D]: R blocks of N rows.
            ks.append(_per_head(src[:, 0], wk))
            vs.append(_per_head(src[:, 2], wv))
            for j, r in enumerate(rels):
                src_off[r] = row + j * n
            row += len(rels) * n
        if not ks:
            empty = kqv_all.new_zeros((0, h_, d))
            return empty, empty, src_off, 0
        return torch.cat(ks), torch.cat(vs), src_off, row

    def __repr__(self) -> str:
        return f"{type(self).__name__}(-1, {self.out_channels}, heads={self.heads})"


def _per_head(x: Tensor, w: Tensor) -> Tensor:
    """`x` [N, H, D] under each of R per-head matrices `w` [H, R, D, D]:
    [R * N, H, D], relation-major. One GEMM `[N, H D] @ [H D, R H D]` with
    the heads' matrices on the diagonal blocks: twice the arithmetic of
    per-head products at H = 2, but one well-shaped matmul (einsum's batched
    form of it, [N, D] x [D, D] per head, measured 70% of an HGT training
    step on an H200, bench/probes/hetero/profile_hgt.py)."""
    n, h, d = x.shape
    r = w.size(1)
    eye = torch.eye(h, dtype=w.dtype, device=w.device)
    big = torch.einsum("hrde,hg->hdrge", w, eye).reshape(h * d, r * h * d)
    return (x.reshape(n, h * d) @ big).view(n, r, h, d).transpose(0, 1).reshape(-1, h, d)


# --------------------------------------------------------------------------
# Checks.
# --------------------------------------------------------------------------

def _check_metadata(metadata) -> Tuple[List[str], List[Tuple[str, str, str]]]:
    try:
        node_types, edge_types = metadata
        node_types = list(node_types)
        edge_types = [tuple(t) for t in edge_types]
    except (TypeError, ValueError):
        raise ValueError(f"{_NAME}: expected metadata as (node types, edge types), "
                         f"got {metadata!r}") from None
    for t in node_types:
        if not isinstance(t, str):
            raise ValueError(f"{_NAME}: expected node types as strings, got {t!r}")
    for t in edge_types:
        if len(t) != 3 or not all(isinstance(s, str) for s in t):
            raise ValueError(f"{_NAME}: expected edge types as (source, relation, "
                             f"destination) strings, got {t!r}")
    return node_types, edge_types


def _check_features(layer: HGTConv, x_dict) -> Mapping[str, Tensor]:
    """x_dict: {node type: [N, in_channels[type]] float tensor}, one dtype
    and device, at least one type the layer projects (types it does not
    know are ignored, as PyG)."""
    if not isinstance(x_dict, Mapping):
        raise TypeError(f"{_NAME}: expected x_dict to be a dict of node features, got "
                        f"{type(x_dict).__name__}")
    lins = layer.kqv_lin.lins
    first = None
    for t, x in x_dict.items():
        if t not in lins:
            continue
        if not isinstance(x, Tensor):
            raise TypeError(f"{_NAME}: expected x_dict[{t!r}] to be a torch.Tensor, got "
                            f"{type(x).__name__}")
        lin = lins[t]
        c = None if lin.is_lazy() else lin.in_channels
        if x.dim() != 2:
            raise ValueError(f"{_NAME}: expected x_dict[{t!r}] of shape [num_nodes, "
                             f"{c or 'channels'}], got {tuple(x.shape)}")
        if c is not None and x.size(1) != c:
            raise ValueError(f"{_NAME}: expected x_dict[{t!r}] with {c} channels "
                             f"(in_channels), got {x.size(1)}")
        if x.dtype not in _common._DTYPES:
            raise TypeError(f"{_NAME}: expected x_dict[{t!r}] of dtype float32, float64, "
                            f"bfloat16 or float16, got {x.dtype}")
        if not _common.compatible(x.dtype, lin.weight.dtype, x.device):
            raise TypeError(f"{_NAME}: x_dict[{t!r}] is {x.dtype} but the layer's "
                            f"parameters are {lin.weight.dtype}; convert one of them, or "
                            f"run the layer under torch.autocast")
        if first is None:
            first = (t, x)
        elif x.device != first[1].device or x.dtype != first[1].dtype:
            raise TypeError(f"{_NAME}: x_dict[{t!r}] is {x.dtype} on {x.device} but "
                            f"x_dict[{first[0]!r}] is {first[1].dtype} on "
                            f"{first[1].device}; pass one dtype and device")
    if first is None:
        raise ValueError(f"{_NAME}: x_dict holds none of the layer's node types "
                         f"{list(lins)}")
    return x_dict


def _check_relations(layer: HGTConv, x_dict, edge_index_dict):
    """(the edge types of edge_index_dict in its order, {edge type:
    edge_index}): each edge type one of the layer's, its node types in
    x_dict, its graph a [2, E] integer tensor on their device (ids are
    checked when the concatenated graph is built) or a sparse adjacency
    [num_dst, num_src] (PyG's adj_t: a torch.sparse COO, CSR or CSC tensor
    or a torch_sparse.SparseTensor; values ignored, as PyG's layer ignores
    them), which is turned into its (cached) edge_index as PyG's
    construct_bipartite_edge_index does, duplicates of an uncoalesced COO
    tensor kept."""
    if not isinstance(edge_index_dict, Mapping):
        raise TypeError(f"{_NAME}: expected edge_index_dict to be a dict of edge "
                        f"indices, got {type(edge_index_dict).__name__}")
    lins = layer.kqv_lin.lins
    device = next(x_dict[t] for t in x_dict if t in lins).device
    relations, edges = [], {}
    for r, ei in edge_index_dict.items():
        if r not in layer.edge_types_map:
            raise ValueError(f"{_NAME}: edge type {r!r} of edge_index_dict is not among "
                             f"the layer's edge types {layer.edge_types}")
        for side, t in (("source", r[0]), ("destination", r[-1])):
            if t not in x_dict or t not in lins:
                raise ValueError(f"{_NAME}: edge type {r!r} needs the features of its "
                                 f"{side} type, x_dict[{t!r}]")
        if _common.is_sparse(ei):
            ei, _, (ns, nd) = _common.sparse_edges(
                f"{_NAME} (edge_index_dict[{r!r}])", ei, "source_to_target", device,
                duplicates="entries")
            want = (x_dict[r[0]].size(0), x_dict[r[-1]].size(0))
            if (ns, nd) != want:
                raise ValueError(f"{_NAME}: the adjacency of edge type {r!r} is "
                                 f"{nd} x {ns} but its node types have {want[1]} "
                                 f"(destinations, rows) x {want[0]} (sources, "
                                 f"columns) nodes")
        _common.check_edge_index(_NAME, ei, f"edge_index_dict[{r!r}]")
        if ei.device != device:
            raise ValueError(f"{_NAME}: the node features are on {device} but "
                             f"edge_index_dict[{r!r}] is on {ei.device}; move both to "
                             f"one device")
        relations.append(r)
        edges[r] = ei
    return relations, edges


def _offsets(counts: Dict[str, int]) -> Dict[str, int]:
    out, row = {}, 0
    for t, n in counts.items():
        out[t] = row
        row += n
    return out


# --------------------------------------------------------------------------
# The concatenated graph.
# --------------------------------------------------------------------------

def _concatenate(edge_indices: List[Tensor], layout: tuple) -> Tensor:
    """PyG's construct_bipartite_edge_index: every edge type's edges, in
    edge_index_dict's order, sources shifted to their edge type's rows of
    the keys and destinations to their node type's rows of the queries."""
    return torch.cat([torch.stack([ei[0].long() + s_off, ei[1].long() + d_off])
                      for ei, (_, s_off, _, d_off, _) in zip(edge_indices, layout)], dim=1)


def _check_ids(edge_indices: List[Tensor], layout: tuple) -> None:
    """ValueError naming the edge type and side of an id outside its node
    type's count (one read back). The concatenated graph's own check
    cannot see an id that lands in another type's rows."""
    parts = [(ei, rec) for ei, rec in zip(edge_indices, layout) if ei.size(1)]
    if not parts:
        return
    bounds = torch.cat([torch.cat([ei.long().min(1).values, ei.long().max(1).values])
                        for ei, _ in parts]).tolist()
    for k, (_, (r, _, n_src, _, n_dst)) in enumerate(parts):
        lo_s, lo_d, hi_s, hi_d = bounds[4 * k:4 * k + 4]
        for side, lo, hi, n, t in (("source", lo_s, hi_s, n_src, r[0]),
                                   ("destination", lo_d, hi_d, n_dst, r[-1])):
            if lo < 0 or hi >= n:
                raise ValueError(f"{_NAME}: edge_index_dict[{r!r}] holds {side} "
                                 f"id {lo if lo < 0 else hi}, outside [0, {n}) for "
                                 f"the {n} nodes of type {t!r}")


def _bipartite_graph(layer: HGTConv, edge_indices: List[Tensor], layout: tuple,
                     num_src: int, num_dst: int) -> Tensor:
    """The concatenated graph [2, E]: built once per tuple of edge_index
    tensors and layout (a private tensor, the same object on every call so
    gnnc's graph cache keeps its structures), built anew when one of them
    changes. Under torch.compile the lookup is the op `gnnc_nn::hgt_graph`
    (no graph break, and the graph is not rebuilt per step)."""
    ints = [v for _, s_off, n_s, d_off, n_d in layout for v in (s_off, n_s, d_off, n_d)]
    if torch.compiler.is_compiling() or any(ei.is_meta for ei in edge_indices):
        # The edge types cross the op as the layer's list (a constant string
        # made once) and each graph's position in it.
        return _graph_op(list(edge_indices), ints, num_src, num_dst,
                         layer._edge_types_text,
                         [layer.edge_types_map[r] for r, *_ in layout])
    return _cached_graph(edge_indices, ints, num_src, num_dst, [r for r, *_ in layout])


def _encode_names(names: list) -> str:
    """Edge types as one string, which a custom op can take (it takes no
    list of tuples): a JSON list of their parts (PyG's edge types are
    tuples of strings; anything else is written as its str)."""
    return json.dumps([list(r) if isinstance(r, tuple) else r for r in names],
                      default=str)


def _decode_names(text: str) -> list:
    return [tuple(r) if isinstance(r, list) else r for r in json.loads(text)]


def _cached_graph(edge_indices: List[Tensor], ints: List[int], num_src: int, num_dst: int,
                  names: list) -> Tensor:
    layout = tuple((names[k], *ints[4 * k:4 * k + 4]) for k in range(len(names)))

    def build():
        _check_ids(edge_indices, layout)
        return _core._make_private(_concatenate(edge_indices, layout))

    return _common._derived(tuple(edge_indices), ("hgt", tuple(ints), num_src, num_dst),
                            build)


# Outside CUDA graphs (it hands out a cached tensor and checks its inputs on
# every call), as gnnc_nn::self_loops.
@torch.library.custom_op("gnnc_nn::hgt_graph", mutates_args=(),
                         tags=_core._NOT_IN_CUDA_GRAPHS)
def _graph_op(edge_indices: List[Tensor], layout: List[int], num_src: int,
              num_dst: int, edge_types: str, positions: List[int]) -> Tensor:
    # `edge_types` (_encode_names): the layer's, `positions` each graph's in
    # them, so that an id out of range is reported naming the user's edge
    # type, as it is outside torch.compile.
    names = _decode_names(edge_types)
    return _cached_graph(edge_indices, layout, num_src, num_dst,
                         [names[k] for k in positions])


@_graph_op.register_fake
def _(edge_indices, layout, num_src, num_dst, edge_types, positions):
    total = sum(ei.size(1) for ei in edge_indices)
    return edge_indices[0].new_empty((2, total), dtype=torch.int64)
