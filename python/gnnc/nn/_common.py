"""Pieces the `gnnc.nn` layers share: PyG-compatible linear layers and
initialisers, input checks, PyG's self-loop handling, attention dropout masks
and the call into a compiled `gnn` function."""

import functools
import importlib.abc
import importlib.util
import math
import sys
import threading
import weakref
from typing import Optional, Tuple, Union

import torch
from torch import Tensor

import gnnc
from gnnc import _core

from . import _ir

_DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.bfloat16: "bf16",
           torch.float16: "f16"}


# --------------------------------------------------------------------------
# Parameters and initialisers (as torch_geometric.nn.inits / dense.Linear).
# --------------------------------------------------------------------------

def uniform_(value: Tensor, bound: float) -> None:
    """`value.uniform_(-bound, bound)` drawn in the logical order whatever
    the layout: PyG draws into contiguous weights and the values must be
    PyG's for the same seed, also for a parameter given another layout
    (which is kept)."""
    with torch.no_grad():
        if value.is_contiguous():
            value.uniform_(-bound, bound)
        else:
            value.copy_(torch.empty(value.shape, dtype=value.dtype,
                                    device=value.device).uniform_(-bound, bound))


def glorot(value: Optional[Tensor]) -> None:
    if value is not None:
        uniform_(value, math.sqrt(6.0 / (value.size(-2) + value.size(-1))))


def zeros(value: Optional[Tensor]) -> None:
    if value is not None:
        with torch.no_grad():
            value.zero_()


def optional_bias(module: torch.nn.Module, bias: bool, size: int) -> None:
    """PyG's `bias`: a `[size]` parameter named `bias`, or `bias` registered
    as None."""
    module.register_parameter(
        "bias", torch.nn.Parameter(torch.empty(size)) if bias else None)


def parameter_or_buffer(module: torch.nn.Module, name: str, learnable: bool,
                        value: Tensor) -> None:
    """`value` as the parameter `name` when `learnable`, else as a buffer
    (PyG's GIN eps / AGNN beta)."""
    if learnable:
        setattr(module, name, torch.nn.Parameter(value))
    else:
        module.register_buffer(name, value)


def optional_residual(module: torch.nn.Module, residual: bool, in_channels: int,
                      size: int) -> None:
    """PyG's `residual` (GAT, GATv2): a bias-free glorot `Linear` named `res`,
    or `res` registered as None."""
    if residual:
        module.res = Linear(in_channels, size, bias=False, weight_initializer="glorot")
    else:
        module.register_parameter("res", None)


class Linear(torch.nn.Module):
    """`x W^T + b` with PyG's `Linear` parameter names (`weight` [out, in],
    `bias` [out]) and initialisers (`weight_initializer` None or
    'kaiming_uniform': kaiming uniform with a = sqrt(5); 'glorot'; bias
    initialiser None: uniform(+-1/sqrt(in)); 'zeros').

    `in_channels <= 0` is PyG's lazy initialisation: `weight` is an
    `UninitializedParameter` until the first call (or `materialize`, or a
    state dict that holds the weight), which fixes `in_channels` from the
    input and initialises both parameters then."""

    def __init__(self, in_channels: int, out_channels: int, bias: bool = True,
                 weight_initializer: Optional[str] = None,
                 bias_initializer: Optional[str] = None):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.weight_initializer = weight_initializer
        self.bias_initializer = bias_initializer
        if in_channels > 0:
            self.weight = torch.nn.Parameter(torch.empty(out_channels, in_channels))
        else:
            self.weight = torch.nn.parameter.UninitializedParameter()
        self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        optional_bias(self, bias, out_channels)
        self.reset_parameters()

    def is_lazy(self) -> bool:
        return isinstance(self.weight, torch.nn.parameter.UninitializedParameter)

    def materialize(self, in_channels: int) -> None:
        """Gives a lazy layer its input size and initialises it."""
        if self.is_lazy():
            self.in_channels = in_channels
            self.weight.materialize((self.out_channels, in_channels))
            self.reset_parameters()

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        if self.is_lazy():  # as PyG: the uninitialised parameter itself
            destination[prefix + "weight"] = self.weight
            if self.bias is not None:
                destination[prefix + "bias"] = (self.bias if keep_vars else
                                                self.bias.detach())
            return
        super()._save_to_state_dict(destination, prefix, keep_vars)

    def _lazy_load_hook(self, state_dict, prefix, *args):
        """A state dict's weight sizes a lazy layer; a lazy layer's own
        (uninitialised) weight loads into a lazy layer as nothing (the
        layer stays lazy, as PyG's); into a sized one it is refused (PyG
        makes the layer lazy again, which gnnc's layers, sized at
        construction, cannot be)."""
        weight = state_dict.get(prefix + "weight")
        if weight is None:
            return
        if isinstance(weight, torch.nn.parameter.UninitializedParameter):
            if not self.is_lazy():
                raise ValueError(
                    f"cannot load the uninitialised weight '{prefix}weight' of a "
                    f"lazy layer (in_channels=-1, never called) into a layer of "
                    f"{self.in_channels} input channels; build the layer with "
                    f"in_channels=-1 too, or call the lazy one once first")
            # Nothing to copy: a lazy layer keeps its own uninitialised
            # weight (torch cannot copy one into another).
            state_dict[prefix + "weight"] = self.weight
            return
        if self.is_lazy() and weight.dim() == 2:
            self.materialize(weight.size(1))

    def reset_parameters(self) -> None:
        if self.is_lazy():
            return  # initialised when materialised
        fan = self.in_channels
        init = self.weight_initializer
        with torch.no_grad():
            if init == "glorot":
                glorot(self.weight)
            elif init == "uniform":
                uniform_(self.weight, 1.0 / math.sqrt(fan))
            elif init in (None, "kaiming_uniform"):
                # PyG's formula to the bit (a ** 2 is 5.000000000000001:
                # a float64 layer materialised lazily drew other weights).
                a = math.sqrt(5)
                uniform_(self.weight, math.sqrt(6 / ((1 + a ** 2) * fan)))
            else:
                raise RuntimeError(f"Weight initializer '{init}' not supported")
            if self.bias is not None:
                if self.bias_initializer == "zeros":
                    self.bias.zero_()
                elif self.bias_initializer is None:
                    bound = 1.0 / math.sqrt(fan)
                    self.bias.uniform_(-bound, bound)
                else:
                    raise RuntimeError(
                        f"Bias initializer '{self.bias_initializer}' not supported")

    def forward(self, x: Tensor) -> Tensor:
        if self.is_lazy():
            self.materialize(x.size(-1))
        return torch.nn.functional.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"{self.in_channels}, {self.out_channels}, "
                f"bias={self.bias is not None}")


# --------------------------------------------------------------------------
# Constructor checks.
# --------------------------------------------------------------------------

def check_channels(layer: str, name: str, value) -> int:
    if isinstance(value, (tuple, list)):
        raise NotImplementedError(
            f"{layer}: {name}={tuple(value)!r} (bipartite message passing with "
            f"separate source and target sizes) is not supported by gnnc.nn")
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{layer}: {name} must be an int, got {value!r}")
    if value <= 0 and name == "in_channels":
        return value  # lazy: sized by the first input (Linear)
    if value <= 0 and name == "edge_dim":
        # PyG's edge projection is then a lazy Linear, sized by the first
        # edge_attr: valid input there, not a bad value.
        raise NotImplementedError(
            f"{layer}: edge_dim={value} (an edge projection sized by the first "
            f"edge_attr, as PyG's lazy Linear) is not supported by gnnc.nn; give "
            f"edge_dim, the width of edge_attr")
    if value <= 0:
        raise ValueError(f"{layer}: {name} must be positive, got {value}")
    return value


def check_channel_pair(layer: str, value) -> Tuple[int, int]:
    """`in_channels` as (source, destination) channels: an int for both or
    PyG's bipartite pair; entries <= 0 are lazy (sized by the first input)."""
    pair = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    if len(pair) != 2:
        raise ValueError(f"{layer}: in_channels must be an int or a (source, "
                         f"destination) pair, got {value!r}")
    for v in pair:
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{layer}: in_channels must be an int or a pair of "
                            f"ints, got {value!r}")
    return pair


def _first_ones_first(items: list, first, key=lambda item: item) -> list:
    """`items` with those whose key is in `first` moved ahead, in `first`'s
    order (the others keep theirs)."""
    rank = {id(m): i for i, m in enumerate(first)}
    return sorted(items, key=lambda item: rank.get(id(key(item)), len(rank)))


def lazy(m) -> bool:
    """Whether Linear `m` has not sized its weight yet (gnnc's or PyG's
    lazy Linear; a plain torch.nn.Linear set in its place never is)."""
    return isinstance(m.weight, torch.nn.parameter.UninitializedParameter)


def in_channels_of(m) -> int:
    """The input width of a sized Linear (any kind: gnnc's and PyG's say
    `in_channels`, torch.nn.Linear `in_features`)."""
    return int(m.weight.size(1))


def materialize_lazy(module: torch.nn.Module, x: Tensor, first=()) -> None:
    """Sizes a lazy layer's `Linear`s (`in_channels <= 0`) from `x`'s
    channels before the layer uses their weights directly; the size is kept
    (`channels`) so later inputs are checked against it. `first`: Linears
    drawn before the others, in the order PyG's forward first calls them
    (its lazy Linears draw their weights then), so that one seed gives
    PyG's initial weights."""
    for m in _first_ones_first(list(module.modules()), first):
        if isinstance(m, Linear) and m.is_lazy():
            m.materialize(x.size(-1))
    if getattr(module, "_lazy_in", None) is None:
        module._lazy_in = next((m.in_channels for m in module.modules()
                                if isinstance(m, Linear) and m.in_channels > 0),
                               None)


def channels(module: torch.nn.Module) -> Optional[int]:
    """The input channels a layer checks x against: its `in_channels`, or
    for a lazy layer the size its first input (or state dict) gave it."""
    if module.in_channels > 0:
        return module.in_channels
    return getattr(module, "_lazy_in", None)


def check_heads(layer: str, heads) -> int:
    if isinstance(heads, bool) or not isinstance(heads, int) or heads <= 0:
        raise ValueError(f"{layer}: heads must be a positive int, got {heads!r}")
    return heads


def check_dropout(layer: str, p: float) -> float:
    if not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"{layer}: dropout must be in [0, 1], got {p}")
    return float(p)


def check_kwargs(layer: str, kwargs: dict, aggr_default: Optional[str] = "add") -> str:
    """MessagePassing's keyword arguments: `aggr` (only the layer's own),
    `flow` ('source_to_target' or 'target_to_source'), `node_dim` (the
    layer's default) and `decomposed_layers` (an execution detail, ignored).
    Returns the flow; anything else is refused by name."""
    flow = kwargs.pop("flow", "source_to_target")
    if flow not in ("source_to_target", "target_to_source"):
        raise ValueError(f"{layer}: expected flow 'source_to_target' or "
                         f"'target_to_source', got {flow!r}")
    if "aggr" in kwargs:
        aggr = kwargs.pop("aggr")
        if aggr != aggr_default:
            raise NotImplementedError(
                f"{layer}: aggr={aggr!r} is not supported by gnnc.nn (only "
                f"{aggr_default!r})")
    kwargs.pop("decomposed_layers", None)
    for name in ("node_dim",):
        if name in kwargs:
            raise NotImplementedError(f"{layer}: {name} is not supported by gnnc.nn")
    if kwargs:
        raise NotImplementedError(
            f"{layer}: argument(s) {', '.join(sorted(kwargs))} not supported by gnnc.nn")
    return flow


_ABSENT = object()


def setting(module: torch.nn.Module, name: str, default=None):
    """`getattr(module, name, default)` for a plain attribute (a flag the
    constructor sets, as PyG names it), read from the instance's
    dictionary; a name the layer does not have (TransformerConv's
    `add_self_loops`) gives `default` without Module.__getattr__, whose
    miss formats and raises an AttributeError (about 2 us per call).
    Anything else (a class attribute, a parameter, buffer or submodule of
    that name) is read by getattr itself. (gnnc's layer classes define no
    data descriptor of the names asked for, so the instance's dictionary is
    what getattr would read.)"""
    d = module.__dict__
    if name in d:
        return d[name]
    if getattr(type(module), name, _ABSENT) is _ABSENT and \
            name not in d["_parameters"] and name not in d["_buffers"] and \
            name not in d["_modules"]:
        return default
    return getattr(module, name, default)


def refuse(layer: str, argument: str, why: str = "") -> None:
    raise NotImplementedError(
        f"{layer}: {argument} is not supported by gnnc.nn" + (f" ({why})" if why else ""))


_FILL_REDUCE = {"add": "sum", "sum": "sum", "mean": "mean", "max": "amax",
                "min": "amin", "mul": "prod"}


def check_edge_dim(layer: str, edge_dim) -> Optional[int]:
    if edge_dim is None:
        return None
    if isinstance(edge_dim, bool) or not isinstance(edge_dim, int):
        raise ValueError(f"{layer}: edge_dim must be a positive int or None, got "
                         f"{edge_dim!r}")
    return check_channels(layer, "edge_dim", edge_dim)  # (<= 0: PyG's lazy one)


def check_fill_value(layer: str, fill_value):
    """PyG's self-loop edge features: None (ones), a number, a tensor, or a
    reduction of the node's incoming features ('add', 'sum', 'mean', 'max',
    'min', 'mul')."""
    if fill_value is None or isinstance(fill_value, (int, float, Tensor)):
        return fill_value
    if isinstance(fill_value, str) and fill_value in _FILL_REDUCE:
        return fill_value
    raise ValueError(f"{layer}: fill_value must be None, a number, a tensor or one of "
                     f"{', '.join(_FILL_REDUCE)}; got {fill_value!r}")


def check_edge_attr(layer: str, edge_attr, edge_index: Tensor, edge_dim: int,
                    x: Tensor) -> Tensor:
    """Edge features as PyG takes them: [E, edge_dim] (or [E] when edge_dim
    is 1), of x's dtype (under autocast: any it casts) and device. Returns
    them as [E, edge_dim]."""
    if not isinstance(edge_attr, Tensor):
        raise TypeError(f"{layer}: expected edge_attr to be a torch.Tensor, got "
                        f"{type(edge_attr).__name__}")
    check_dense(layer, "edge_attr", edge_attr)
    e = edge_index.size(1)
    if edge_attr.dim() == 1 and edge_dim == 1:
        edge_attr = edge_attr.view(-1, 1)
    if edge_attr.dim() != 2 or edge_attr.size(0) != e or edge_attr.size(1) != edge_dim:
        raise ValueError(f"{layer}: expected edge_attr of shape [{e}, {edge_dim}] "
                         f"(num_edges, edge_dim), got {tuple(edge_attr.shape)}")
    if not compatible(edge_attr.dtype, x.dtype, x.device) or edge_attr.device != x.device:
        raise TypeError(f"{layer}: edge_attr must have x's dtype and device ({x.dtype}, "
                        f"{x.device}), got ({edge_attr.dtype}, {edge_attr.device})")
    return edge_attr


def self_loop_attr(edge_attr: Tensor, edge_index: Tensor, keep: Optional[Tensor],
                   num_nodes: int, fill_value) -> Tensor:
    """PyG's add_self_loops(remove_self_loops(...)) on edge features: the
    input's [E, D] features, then one row per node for its self-loop, from
    `fill_value` (compute_loop_attr). A reduction runs over the node's
    incoming edges in edge_index's own orientation (row 1), the input's
    self-loops left out (`keep` is 0 on them; None: there are none). The
    input's self-loop rows stay (their edges are masked), as zeros: PyG
    removes them before `lin_edge`, and a NaN or inf kept there made the
    projection's weight gradient NaN (0 * inf) where PyG's is finite."""
    n = num_nodes
    d = edge_attr.size(1)
    if keep is not None:
        dropped = (keep[:edge_attr.size(0)] == 0).view(-1, 1)
        edge_attr = edge_attr.masked_fill(dropped, 0.0)
    if fill_value is None:
        loop = edge_attr.new_ones((n, d))
    elif isinstance(fill_value, (int, float)):
        loop = edge_attr.new_full((n, d), float(fill_value))
    elif isinstance(fill_value, Tensor):
        value = fill_value.to(edge_attr.device, edge_attr.dtype)
        loop = value.reshape(1, -1).expand(n, d)
    else:
        e = edge_attr.size(0)
        target = edge_index[1].long()
        if keep is not None:  # the input's self-loops go to a spare row
            target = torch.where(keep[:e] != 0, target, n)
        loop = edge_attr.new_zeros((n + 1, d)).scatter_reduce(
            0, target.view(-1, 1).expand(e, d), edge_attr, _FILL_REDUCE[fill_value],
            include_self=False)[:n]
    return torch.cat([edge_attr, loop], dim=0)


# --------------------------------------------------------------------------
# Forward checks.
# --------------------------------------------------------------------------

def check_dense(layer: str, name: str, t: Tensor) -> None:
    """Node or edge features are read as dense rows: a sparse tensor (PyG's
    layers that start with a Linear take a sparse x) is refused by name,
    not densified behind the caller's back (a bag-of-words matrix can be
    far larger dense)."""
    if t.layout != torch.strided:
        raise TypeError(f"{layer}: expected {name} to be a dense (strided) tensor, "
                        f"got layout {t.layout}; gnnc.nn reads node and edge "
                        f"features as dense rows: pass {name}.to_dense()")


def check_inputs(layer: str, x, edge_index, in_channels: Optional[int],
                 dtype: Optional[torch.dtype], flow: str = "source_to_target",
                 duplicates: str = "spmm"):
    """x: a [N, in_channels] float tensor of the parameters' dtype (under
    torch.autocast: float32, bfloat16 or float16 with float32, bfloat16 or
    float16 parameters, see compute_dtype);
    edge_index: a [2, E] integer tensor on x's device, or a sparse adjacency
    (PyG's `adj_t`: a torch.sparse_coo/csr/csc tensor or a
    torch_sparse.SparseTensor of [N, N], row = target, column = source;
    `duplicates`: how its repeated entries are read, as sparse_edges').

    Returns (edge_index [2, E], values): the graph as an edge_index, and a
    sparse adjacency's values in its edge order (None for an edge_index or a
    SparseTensor without values)."""
    if isinstance(x, (tuple, list)) and len(x) == 2 and \
            all(v is None or isinstance(v, Tensor) for v in x):
        raise NotImplementedError(
            f"{layer}: a (source, target) pair of node features (bipartite "
            f"message passing) is not supported by gnnc.nn")
    if not isinstance(x, Tensor):
        raise TypeError(f"{layer}: expected x to be a torch.Tensor, got "
                        f"{type(x).__name__}")
    check_dense(layer, "x", x)
    values = None
    if is_sparse(edge_index):
        edge_index, values = _adjacency(layer, x, edge_index, flow, duplicates)
    if not isinstance(edge_index, Tensor):
        raise TypeError(f"{layer}: expected edge_index to be a torch.Tensor "
                        f"[2, E] or a sparse adjacency, got {type(edge_index).__name__}")
    if x.dim() != 2:
        raise ValueError(f"{layer}: expected x of shape [num_nodes, "
                         f"{in_channels if in_channels else 'channels'}], got "
                         f"{tuple(x.shape)}")
    if in_channels is not None and in_channels > 0 and x.size(1) != in_channels:
        raise ValueError(f"{layer}: expected x with {in_channels} channels "
                         f"(in_channels), got {x.size(1)}")
    if x.dtype not in _DTYPES:
        raise TypeError(f"{layer}: expected x of dtype float32, float64, bfloat16 or "
                        f"float16, got {x.dtype}")
    if dtype is not None and x.dtype != dtype and not compatible(x.dtype, dtype, x.device):
        # torch.autocast helps only where it is off and casts both.
        if autocast_dtype(x.device) is not None:
            hint = " (torch.autocast, on here, does not cast float64)"
        elif x.dtype in _AUTOCAST_CAST and dtype in _AUTOCAST_CAST:
            hint = ", or run the layer under torch.autocast"
        else:
            hint = ""
        raise TypeError(f"{layer}: x is {x.dtype} but the layer's parameters are "
                        f"{dtype}; convert one of them (e.g. layer.to({x.dtype})){hint}")
    check_edge_index(layer, edge_index)
    if edge_index.device != x.device:
        raise ValueError(f"{layer}: x is on {x.device} but edge_index is on "
                         f"{edge_index.device}; move both to one device")
    return edge_index, values


def check_edge_index(layer: str, edge_index, what: str = "edge_index") -> None:
    """`edge_index` (named `what` in the message): a [2, E] int64 or int32
    torch.Tensor."""
    if not isinstance(edge_index, Tensor):
        raise TypeError(f"{layer}: expected {what} to be a torch.Tensor [2, E], got "
                        f"{type(edge_index).__name__}")
    if edge_index.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"{layer}: expected {what} of dtype int64 (or int32), got "
                        f"{edge_index.dtype}")
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"{layer}: expected {what} of shape [2, num_edges], got "
                         f"{tuple(edge_index.shape)}")


def bipartite_inputs(layer: str, x, edge_index, size, channels: Tuple[int, int],
                     dtype: Optional[torch.dtype], flow: str, duplicates: str = "spmm",
                     mixed: bool = False):
    """PyG's bipartite message passing: `x` a (x_src, x_dst) pair (x_dst
    may be None), `edge_index` a [2, E] tensor or a sparse adjacency
    [num_dst, num_src] (PyG's adj_t), `size` None or (num_src, num_dst)
    (None entries: from x, or from the adjacency; num_dst defaults to num_src
    without x_dst, as in PyG; `duplicates`: as sparse_edges'). Each present x
    is checked as check_inputs checks x, against its side's `channels`
    (<= 0: not checked); the two of one dtype, unless `mixed` (a layer whose
    PyG counterpart only adds the sides, PyTorch promoting them: GIN's
    (1 + eps) x_dst plus the aggregate). Returns
    (x_src, x_dst, edge_index, (num_src, num_dst), values): `values` a
    sparse adjacency's values in the edge order (None for an edge_index);
    the graph cache checks that sources are below num_src and destinations
    below num_dst.

    The layers run gnn functions on a bipartite graph, each side's rows with
    its own count."""
    if flow != "source_to_target":
        refuse(layer, f"flow={flow!r} with a (source, target) pair of node features",
               "bipartite inputs take flow='source_to_target'")
    if len(x) != 2:
        raise ValueError(f"{layer}: expected x as a (source, target) pair of node "
                         f"features, got {len(x)} items")
    x_src, x_dst = x
    if not isinstance(x_src, Tensor):
        raise TypeError(f"{layer}: expected the source features x[0] to be a "
                        f"torch.Tensor, got {type(x_src).__name__}")
    values, from_adj = None, (None, None)
    if is_sparse(edge_index):
        edge_index, values, from_adj = sparse_edges(layer, edge_index, flow, x_src.device,
                                                    duplicates)
    edge_index, _ = check_inputs(layer, x_src, edge_index, channels[0] or None, dtype,
                                 flow)
    if x_dst is not None:
        if not isinstance(x_dst, Tensor):
            raise TypeError(f"{layer}: expected the target features x[1] to be a "
                            f"torch.Tensor or None, got {type(x_dst).__name__}")
        check_inputs(layer, x_dst, edge_index, channels[1] or None, dtype, flow)
        if x_dst.dtype != x_src.dtype and not mixed:
            raise TypeError(f"{layer}: the source features are {x_src.dtype} but the "
                            f"target features {x_dst.dtype}")
    given = (None, None) if size is None else size_pair(layer, size)
    found = (x_src.size(0), None if x_dst is None else x_dst.size(0))
    counts = []
    for k, (g, f, a) in enumerate(zip(given, found, from_adj)):
        if g is not None:
            try:
                g = _core._check_num_nodes(g, f"size[{k}]")
            except (TypeError, ValueError) as e:
                raise type(e)(f"{layer}: {str(e).removeprefix('gnnc: ')}") from None
            if f is not None and f != g:
                raise ValueError(f"{layer}: size[{k}] is {g} but x[{k}] has {f} rows")
            if a is not None and a != g:
                raise ValueError(f"{layer}: size[{k}] is {g} but the adjacency has "
                                 f"{a} {('sources (columns)', 'targets (rows)')[k]}")
        if a is not None and f is not None and f != a:
            raise ValueError(f"{layer}: the adjacency has {a} "
                             f"{('sources (columns)', 'targets (rows)')[k]} but x[{k}] "
                             f"has {f} rows")
        counts.append(next((c for c in (g, f, a) if c is not None), None))
    if counts[1] is None:
        counts[1] = counts[0]
    return x_src, x_dst, edge_index, tuple(counts), values


def linear_pair_inputs(layer: str, x, edge_index, size, sides, flow: str,
                       targets_required: bool, first=(), duplicates: str = "spmm"):
    """`bipartite_inputs` for a layer whose Linears read the two sides:
    `sides` = (the Linears reading the sources, those reading the targets),
    the first of each giving its side's channels (lazy ones: not checked,
    then sized here by the side's features) and the first source Linear the
    dtype. A single `x` counts as the pair (x, x). `targets_required`: a
    pair without x_dst is refused (the layer reads both sides). `first`: as
    materialize_lazy's; `duplicates`: as sparse_edges'. Returns
    bipartite_inputs' (x_src, x_dst, edge_index, sizes, values)."""
    pair = tuple(x) if isinstance(x, (tuple, list)) else (x, x)
    if targets_required and len(pair) == 2 and pair[1] is None:
        raise ValueError(f"{layer}: the target features x[1] are required (PyG's "
                         f"layer reads them too)")
    channels = tuple(0 if not lins or lazy(lins[0]) else lins[0].weight.size(1)
                     for lins in sides)
    x_src, x_dst, edge_index, sizes, values = bipartite_inputs(
        layer, pair, edge_index, size, channels, sides[0][0].weight.dtype, flow,
        duplicates)
    sided = [(m, side) for lins, side in zip(sides, (x_src, x_dst)) for m in lins]
    for m, side in _first_ones_first(sided, first, key=lambda ms: ms[0]):
        if side is not None and lazy(m):
            m.materialize(side.size(1))
    return x_src, x_dst, edge_index, sizes, values


# --------------------------------------------------------------------------
# Sparse adjacency inputs (PyG's adj_t).
# --------------------------------------------------------------------------
#
# adj_t[i, j] != 0 is an edge j -> i (PyG's transposed adjacency: row =
# target). It becomes the edge_index [cols; rows] in the adjacency's own
# order (row-major for CSR and coalesced COO), so its values line up with
# the edges without a permutation. The edge_index is cached per adjacency
# object, checked like an edge_index (version counter, data pointer, and
# contents on the device: _core._Snapshot of its index tensors).
#
# Entries repeating a [row, column] are read as the layer's PyG path reads
# them (sparse_edges' `duplicates`), whatever the layout and a COO tensor's
# is_coalesced() flag say (torch.sparse_coo_tensor(..., is_coalesced=True)
# and PyG's to_edge_index, which sets it on the caller's tensor, make it
# claim what its indices may not hold): summed into one edge where PyG
# coalesces the tensor (its spmm converts COO to CSR; its add_self_loops
# rebuilds any layout coalesced), else each entry an edge (PyG's
# to_edge_index; a CSR tensor in its spmm, whose mean counts every entry).
# Whether a tensor's indices are in fact sorted and unique is read once
# per new graph (_cached_adjacency), never assumed; a compressed tensor's
# summed graph is built once too (_summed).

_ADJ = {}
_ADJ_SIZE = 32

# sparse_edges' `duplicates`: how entries repeating a [row, column] are read.
_DUPLICATES = ("spmm", "summed", "entries")


def _is_sparse_tensor(a) -> bool:
    """A torch_sparse.SparseTensor (duck-typed: torch_sparse is optional; no
    isinstance, on which dynamo breaks the graph for sparse tensors)."""
    return (type(a).__name__ == "SparseTensor" and hasattr(a, "coo")
            and hasattr(a, "sparse_sizes"))


def _named(layer: torch.nn.Module, e: ValueError) -> Optional[ValueError]:
    """The graph cache's refusal of node ids out of range (a ValueError
    starting "gnnc: edge_index", raised where the layer's name is not known)
    as the same error naming the layer; None for any other error."""
    message = str(e)
    if not message.startswith("gnnc: edge_index"):
        return None
    return ValueError(f"{type(layer).__name__}: {message[len('gnnc: '):]}")


def _own_code(wrapper, forward):
    """`wrapper` with a code object of its own, named as `forward`: dynamo
    keeps its compiled frames and counts recompilations per code object, and
    one shared by every layer made the ninth layer compiled alone hit the
    recompile limit."""
    names = dict(co_name=forward.__name__)
    if hasattr(wrapper.__code__, "co_qualname"):  # Python 3.11 on
        names["co_qualname"] = forward.__qualname__
    wrapper.__code__ = wrapper.__code__.replace(**names)
    return wrapper


def names_graph_errors(forward):
    """Decorates a layer's forward: the graph cache's refusal of node ids out
    of range is raised naming the layer (_named); everything else is
    unchanged. For the layers that take a sparse adjacency themselves
    (sparse_runs_eagerly does this for the others)."""
    @functools.wraps(forward)
    def wrapper(self, *args, **kwargs):
        return _naming_graph_errors(forward, self, *args, **kwargs)
    return _own_code(wrapper, forward)


def _naming_graph_errors(forward, layer, *args, **kwargs):
    """forward(layer, ...), the graph cache's refusal of node ids out of
    range raised naming the layer (_named)."""
    try:
        return forward(layer, *args, **kwargs)
    except ValueError as e:
        named = _named(layer, e)
        if named is None:
            raise
        raise named from None


def sparse_runs_eagerly(forward):
    """Decorates a layer's forward(x, edge_index, ...): with a sparse
    adjacency it runs outside torch.compile's tracing (dynamo does not trace
    code on sparse tensors: a graph break, an error under fullgraph=True);
    everything else is unchanged. The graph cache's refusal of node ids out
    of range is raised naming the layer (_named)."""
    @functools.wraps(forward)
    def wrapper(self, x, edge_index, *args, **kwargs):
        # Always through _eagerly: where dynamo falls back to running this
        # frame eagerly it would still compile the frames called from it.
        if is_sparse(edge_index):
            return _eagerly(forward, self, x, edge_index, *args, **kwargs)
        return _naming_graph_errors(forward, self, x, edge_index, *args, **kwargs)
    return _own_code(wrapper, forward)


def _call(fn, *args, **kwargs):
    return fn(*args, **kwargs)


# torch.compiler.disable(_call) once torch._dynamo loads (the hook below).
_eagerly = _call


_SPARSE_LAYOUTS = (torch.sparse_coo, torch.sparse_csr, torch.sparse_csc)


def sparse_edges(layer: str, adj, flow: str, device: torch.device,
                 duplicates: str = "spmm"):
    """A sparse adjacency (PyG's `adj_t`: a torch.sparse COO, CSR or CSC
    tensor or a torch_sparse.SparseTensor of shape [num_dst, num_src], entry
    [i, j] the edge j -> i) as (edge_index [2, E], values in that edge order
    or None, (num_src, num_dst)). The edge_index is cached while `adj` and
    its index tensors live (`_cached_adjacency`). `duplicates` reads
    entries repeating a [row, column] (or out of order) as the layer's PyG
    path reads them:

    - "spmm" (PyG's spmm: GCN without self-loops, SAGE, GIN): a COO tensor
      is coalesced, its duplicates summed (spmm converts it to CSR, which
      coalesces); a CSR or CSC tensor's entries are read one by one (the
      sum is the same, and SAGE's mean counts every entry, as PyG's does);
    - "summed" (PyG's add_self_loops, which rebuilds the tensor coalesced:
      GCN, GAT, GATv2 and AGNN with self-loops): every layout coalesced,
      its duplicates' values summed;
    - "entries" (PyG's to_edge_index): every entry an edge, in the tensor's
      order.

    A COO tensor's is_coalesced() flag is not trusted: whether its indices
    are in fact sorted and unique is read once per new graph, as is a CSR
    or CSC tensor's. `device`: where the features are (the adjacency must
    be there too)."""
    assert duplicates in _DUPLICATES, f"duplicates must be one of {_DUPLICATES}"
    if flow == "target_to_source":
        raise ValueError(
            f"{layer}: flow='target_to_source' is invalid with a sparse adjacency "
            f"(as in PyG); pass the transposed adjacency instead")
    if isinstance(adj, Tensor):
        if adj.layout not in _SPARSE_LAYOUTS:
            raise NotImplementedError(
                f"{layer}: a {adj.layout} adjacency is not supported by gnnc.nn; "
                f"pass a torch.sparse_coo, sparse_csr or sparse_csc adj_t, or "
                f"edge_index")
        # A hybrid adjacency's dense dimensions are per-entry features
        # (GINEConv's edge_attr), not part of the graph's shape.
        shape, where = tuple(adj.shape[:adj.sparse_dim()]), adj.device
    else:
        shape, where = tuple(adj.sparse_sizes()), adj.device()
    if len(shape) != 2:
        raise ValueError(f"{layer}: expected a 2-d sparse adjacency [num_dst, num_src], "
                         f"got shape {shape}")
    if where != device:
        raise ValueError(f"{layer}: x is on {device} but the adjacency is on "
                         f"{where}; move both to one device")
    sizes = (int(shape[1]), int(shape[0]))
    if not isinstance(adj, Tensor):
        row, col, values = adj.coo()
        return _cached_adjacency(adj, (row, col))[0], values, sizes
    if adj.layout == torch.sparse_coo:
        flagged = adj.is_coalesced()
        coalesce = duplicates != "entries"
        if coalesce and not flagged and (adj.is_meta or torch.compiler.is_compiling()):
            # Nothing is cached there (_cached_adjacency): torch's coalesce.
            return _coalesced(adj, sizes)
        # Learnable edge weights: their gradient reaches the tensor through
        # _SummedValues where values() is refused (an unflagged tensor's)
        # or would sum nothing (a flagged one's out of order); _values() is
        # untracked.
        tracked = adj.requires_grad and torch.is_grad_enabled()
        # An unflagged tensor is sorted with the order check: its summed
        # graph then needs no read back of its own (_coo_order).
        edges, in_order = _cached_adjacency(adj, (adj._indices(),),
                                            summed=coalesce and not flagged)
        if coalesce and not in_order:
            # Not sorted and unique, whatever the flag says: its duplicates
            # summed, the summed graph built once per graph (_summed).
            return _summed(adj, edges, None if tracked else adj._values()) + (sizes,)
        if flagged:
            # values(), not _values(): autograd tracks it (learnable edge
            # weights get their gradient).
            return edges, adj.values(), sizes
        if coalesce:
            # Unflagged but sorted and unique in fact: coalesced as it is.
            return _summed(adj, edges, None if tracked else adj._values(),
                           identity=True) + (sizes,)
        if tracked:
            raise NotImplementedError(
                f"{layer}: gradients for an uncoalesced COO adjacency's "
                f"values taken entry by entry are not supported (PyG "
                f"cannot take them either); coalesce it first")
        return edges, adj._values(), sizes
    if adj.layout == torch.sparse_csr:
        parts = (adj.crow_indices(), adj.col_indices())
    else:
        parts = (adj.ccol_indices(), adj.row_indices())
    edges, in_order = _cached_adjacency(adj, parts)
    if duplicates == "summed" and not in_order:
        return _summed(adj, edges, adj.values()) + (sizes,)
    return edges, adj.values(), sizes


class _Summed:
    """A graph whose entries are summed per [row, column] (a COO, CSR or
    CSC tensor's, coalesced as torch's coalesce does): its edge_index
    `graph` [2, G] sorted by (destination, source), each edge once;
    `inverse` [nnz]: each entry's edge; `order` [G]: each edge's entry
    where no entry repeats, else None. Both None: the entries are the
    edges, in their order (a tensor sorted and unique in fact)."""
    __slots__ = ("graph", "inverse", "order")

    def __init__(self, graph: Tensor, inverse: Optional[Tensor], order: Optional[Tensor]):
        self.graph, self.inverse, self.order = graph, inverse, order

    def sum(self, values: Tensor) -> Tensor:
        """The edges' values: their entries' `values` summed (in entry
        order; torch's coalesce sums them in its sort's order, the same
        sums up to rounding), differentiable where `values` is."""
        if self.order is not None:
            return values.index_select(0, self.order)
        if self.inverse is None:
            return values
        total = values.new_zeros((self.graph.size(1),) + tuple(values.shape[1:]))
        return total.index_add(0, self.inverse, values)


class _SummedValues(torch.autograd.Function):
    """A COO tensor's values summed per edge (_Summed.sum), the gradient
    going to the tensor (and from there to the values it was built from)
    as torch's coalesce().values() sends it: a coalesced sparse tensor,
    the edges' [row, column] with their gradients. torch refuses values()
    of an uncoalesced tensor and _values() is untracked; coalescing on
    every call cost a sort (and on the GPU a synchronisation) per call."""

    @staticmethod
    def forward(ctx, adj: Tensor, summed: _Summed) -> Tensor:
        ctx.summed, ctx.shape = summed, adj.shape
        values = adj._values()
        out = summed.sum(values)
        # A new tensor, never an alias of the input's storage.
        return out.clone() if out is values else out

    @staticmethod
    def backward(ctx, grad: Tensor):
        graph = ctx.summed.graph
        rows_cols = torch.stack([graph[1], graph[0]]).long()
        return torch.sparse_coo_tensor(rows_cols, grad, ctx.shape, is_coalesced=True), None


def _summed(adj: Tensor, edges: Tensor, values: Optional[Tensor], identity: bool = False):
    """A COO, CSR or CSC tensor whose entries are not sorted and unique
    (edges `edges`, `values`), coalesced as PyG's spmm (COO) and its
    add_self_loops (any layout) coalesce it: (the edges sorted by
    (destination, source), each once; the values of each's entries summed,
    differentiable where `values` is). `values` None: a COO tensor's own,
    their gradient carried to `adj` (_SummedValues). `identity`: the
    entries are sorted and unique already (only the values are read).
    The graph is built once while `adj`'s cached edge_index holds (a COO
    tensor's usually with the order check, _cached_adjacency; else one
    synchronisation, the count of distinct edges); a call on it only sums
    the values."""
    if identity:
        summed = _Summed(edges, None, None)
    else:
        rec = _ADJ.get(id(adj))
        cache = rec[4] if rec is not None and rec[0]() is adj and rec[2] is edges else None
        summed = cache.get("summed") if cache is not None else None
        if summed is None:
            ncols = int(adj.size(1))
            src, dst = edges.long()
            flag = rec[1][-1].flag if cache is not None else None

            def build():
                keys = _sorted_keys(dst * ncols + src)
                count = int(keys[2][-1]) + 1 if keys[0].numel() else 0
                return _summed_graph(keys, count, ncols, edges.dtype, flag)

            # (normal tensors under inference mode too: kept for later
            # calls, which may train on them)
            summed = _core._outside_inference_mode(build)
            if cache is not None:
                cache["summed"] = summed
    if values is None:
        return summed.graph, _SummedValues.apply(adj, summed)
    return summed.graph, summed.sum(values)


def _sorted_keys(key: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """(`key` [nnz] sorted, stably; the permutation that sorts it; the
    number of each sorted entry's distinct key, from 0): computed on the
    device, nothing read back. The last plus one is the count of
    distinct keys."""
    ordered, perm = torch.sort(key, stable=True)
    starts = torch.ones_like(ordered, dtype=torch.bool)
    starts[1:] = ordered.diff() != 0
    return ordered, perm, starts.cumsum(0) - 1


def _summed_graph(keys: Tuple[Tensor, Tensor, Tensor], count: int, ncols: int,
                  dtype: torch.dtype, flag) -> _Summed:
    """The _Summed of the entries whose keys (destination * ncols + source)
    _sorted_keys sorted: `count` distinct, known on the host. No read
    back (torch.unique would read the count itself)."""
    ordered, perm, number = keys
    distinct = ordered.new_empty(count).scatter_(0, number, ordered)
    graph = torch.stack([distinct % ncols, distinct // ncols]).to(dtype).contiguous()
    graph = _core._mark_dst_sorted(_core._make_private(graph, flag))
    inverse = torch.empty_like(number).scatter_(0, perm, number)
    return _Summed(graph, inverse, perm if count == perm.numel() else None)


def _coalesced(adj: Tensor, sizes: tuple):
    """sparse_edges' answer for a COO tensor whose duplicates are summed:
    built from its entries as they are (a tensor flagged coalesced is
    copied unflagged first: its coalesce() would return it unchanged),
    the values differentiable."""
    if adj.is_coalesced():
        adj = torch.sparse_coo_tensor(adj.indices(), adj.values(), adj.shape,
                                      device=adj.device)
    adj = adj.coalesce()
    ind = adj.indices()
    # Coalesced: sorted by (row, column), i.e. by destination.
    edges = _core._mark_dst_sorted(_core._make_private(torch.stack([ind[1], ind[0]])))
    return edges, adj.values(), sizes


def _adjacency(layer: str, x: Tensor, adj, flow: str, duplicates: str):
    """A one-graph layer's sparse adjacency: square, as many nodes as x has
    rows. (edge_index, values); anything else than a sparse adjacency is
    returned as it is (check_inputs then says what it is)."""
    if not isinstance(adj, Tensor) and not _is_sparse_tensor(adj):
        return adj, None
    edge_index, values, (ns, nd) = sparse_edges(layer, adj, flow, x.device, duplicates)
    if ns != nd:
        raise NotImplementedError(
            f"{layer}: a non-square adjacency [{nd}, {ns}] (bipartite message "
            f"passing) needs a (x_src, x_dst) pair of node features; the layers "
            f"taking one (SAGEConv, GINConv, GINEConv, GATConv, GATv2Conv, "
            f"TransformerConv) accept it with such an adjacency")
    n = x.size(0) if x.dim() >= 1 else -1
    if ns != n:
        raise ValueError(f"{layer}: the adjacency is {nd} x {ns} but x has {n} nodes")
    return edge_index, values


def _check_compressed(adj: Tensor, ptr: Tensor, idx: Tensor) -> bool:
    """A CSR/CSC adjacency's pointers: size + 1 of them, from 0, never
    decreasing, ending at the entries' count (torch checks none of it when
    the tensor is built with check_invariants=False; a broken one failed
    deep inside the conversion, or was read out of bounds). Returns whether
    each row's (CSR) or column's (CSC) indices rise strictly, i.e. the
    tensor is coalesced: no entry repeated. One synchronisation, when the
    adjacency's edge_index is first built."""
    csr = adj.layout == torch.sparse_csr
    what = "crow_indices" if csr else "ccol_indices"
    major = int(adj.size(0) if csr else adj.size(1))
    if ptr.dim() != 1 or ptr.numel() != major + 1:
        raise ValueError(f"gnnc: the sparse adjacency's {what} must hold "
                         f"{major + 1} entries ({'rows' if csr else 'columns'} + 1), "
                         f"got {ptr.numel()}")
    nnz = idx.numel()
    if nnz > 1:
        # idx rises strictly but where one row ends and the next starts (the
        # step into entry ptr[r], 0 < ptr[r] < nnz; other pointers, of empty
        # rows or broken, mark the extra last slot).
        rises = torch.cat([idx.diff() > 0, idx.new_ones(1, dtype=torch.bool)])
        starts = ptr[1:-1].long()
        inside = (starts > 0) & (starts < nnz)
        rises[torch.where(inside, starts - 1, nnz - 1)] = True
        repeats = (~rises).any().long()
    else:
        repeats = ptr.new_zeros((), dtype=torch.long)
    first, last, drops, repeats = torch.stack([
        ptr[0].long(), ptr[-1].long(),
        (ptr.diff() < 0).any().long() if major else ptr.new_zeros((), dtype=torch.long),
        repeats,
    ]).tolist()
    if first != 0 or last != idx.numel() or drops:
        raise ValueError(
            f"gnnc: the sparse adjacency's {what} must start at 0, never decrease "
            f"and end at its {idx.numel()} entries; got {what}[0] = {first}, "
            f"{what}[-1] = {last}" + (", and it decreases" if drops else ""))
    return not repeats


def _edges_of(adj, parts) -> Tensor:
    if isinstance(adj, Tensor) and adj.layout == torch.sparse_coo:
        ind = parts[0]
        return torch.stack([ind[1], ind[0]])
    if isinstance(adj, Tensor):
        # CSR: targets from the row pointers; CSC: sources from the column
        # pointers.
        ptr, idx = parts
        n = ptr.numel() - 1
        major = torch.repeat_interleave(
            torch.arange(n, device=idx.device, dtype=idx.dtype), ptr.diff(),
            output_size=idx.numel())
        if adj.layout == torch.sparse_csr:
            return torch.stack([idx, major])
        return torch.stack([major, idx])
    row, col = parts
    return torch.stack([col, row])


def _coo_order(adj: Tensor, index: Tensor, distinct: bool = False):
    """(whether a COO tensor's `index` [2, nnz] is sorted by (row, column)
    with no duplicate, i.e. coalesced in fact; whether its rows do not
    decrease; with `distinct`, where it is not coalesced, (_sorted_keys'
    keys, their count of distinct keys), else None): one read back, once
    per new graph. `distinct` sorts the keys before the read back,
    whatever it finds: the summed graph then needs no read back of its
    own, where torch.unique after it was a second synchronisation."""
    if index.size(1) < 2:
        return True, True, None
    key = index[0].long() * int(adj.size(1)) + index[1].long()
    facts = [(key.diff() > 0).all().long(), (index[0].diff() >= 0).all().long()]
    keys = None
    if distinct:
        keys = _sorted_keys(key)
        facts.append(keys[2][-1] + 1)
    read = torch.stack(facts).tolist()  # the one synchronisation
    unique, rows = bool(read[0]), bool(read[1])
    return unique, rows, (keys, read[2]) if distinct and not unique else None


def _cached_adjacency(adj, parts, summed: bool = False) -> Tuple[Tensor, bool]:
    """(the edge_index of `adj` (index tensors `parts`), built once while
    `adj` lives and its index tensors hold what they held; for a COO
    tensor whether its indices are in fact sorted and unique, for a CSR or
    CSC tensor whether each row's or column's are, i.e. whether either is
    coalesced; True for a SparseTensor). `summed` (COO): the caller sums
    duplicates; where the indices turn out not coalesced the summed graph
    (_summed) is built with the order check, in its one read back.
    The edges are marked sorted by destination where they are: a CSR
    tensor's, a SparseTensor's (its storage is CSR), a COO tensor's whose
    rows were read not to decrease (its flag is not trusted)."""
    coo = isinstance(adj, Tensor) and adj.layout == torch.sparse_coo
    if torch.compiler.is_compiling() or parts[0].is_meta:
        return _edges_of(adj, parts), (not coo or adj.is_coalesced())
    key = id(adj)
    rec = _ADJ.get(key)
    if rec is not None and rec[0]() is adj:
        _, snaps, edges, in_order, _ = rec
        if any(s.copy is not None and s.stale() for s in snaps):
            _ADJ.pop(key, None)
            raise _core._stale_error(parts[0])
        if len(snaps) == len(parts) and all(s.matches(p) for s, p in zip(snaps, parts)):
            return edges, in_order
    _ADJ.pop(key, None)
    _core._evict_oldest(_ADJ, _ADJ_SIZE)
    in_order = True
    if isinstance(adj, Tensor) and not coo:
        in_order = _check_compressed(adj, *parts)
    snaps = tuple(_core._Snapshot.of(p) for p in parts)
    # Calls on the edge_index honour the change check of the column (or
    # COO) indices; the row pointers' check is read on the next lookup.
    def build():
        edges = _core._make_private(_edges_of(adj, parts).contiguous(), snaps[-1].flag)
        derived, order = {}, in_order
        if coo:
            # A new COO graph reads back once (the CPU test counts it,
            # test_nn.py's test_a_new_coo_graph_reads_back_once): the order
            # check, with the distinct keys' count where `summed`.
            order, dst_sorted, distinct = _coo_order(adj, parts[0], summed)
            if distinct is not None:
                derived["summed"] = _summed_graph(*distinct, int(adj.size(1)),
                                                  edges.dtype, snaps[-1].flag)
        else:
            dst_sorted = not isinstance(adj, Tensor) or adj.layout == torch.sparse_csr
        if dst_sorted:
            _core._mark_dst_sorted(edges)
        return edges, order, derived

    # (normal tensors under inference mode too: kept for later calls, which
    # may train on them)
    edges, in_order, derived = _core._outside_inference_mode(build)

    def drop(_ref, key=key):
        entry = _ADJ.get(key)
        if entry is not None and entry[0] is _ref:
            del _ADJ[key]

    # The last slot: graphs derived from this one (_summed).
    _ADJ[key] = (weakref.ref(adj, drop), snaps, edges, in_order, derived)
    return edges, in_order


def message_weights(layer: str, adj, values: Optional[Tensor], aggr: str,
                    dtype: torch.dtype) -> Optional[Tensor]:
    """The per-edge message weights a sum/mean layer (SAGE, GIN) gets from
    its graph argument, as PyG's spmm applies them: a torch.sparse
    adjacency's values (a SparseTensor's are dropped, as PyG drops them);
    None for an edge_index. PyG's max/min over a torch.sparse adjacency also
    weights the messages, which gnnc's max/min kernels do not: refused."""
    if values is None or not isinstance(adj, Tensor):
        return None
    if aggr not in ("sum", "mean"):
        raise NotImplementedError(
            f"{layer}: aggr={aggr!r} over a torch.sparse adjacency (PyG multiplies "
            f"the messages by its values before the {aggr}) is not supported by "
            f"gnnc.nn; pass edge_index or a torch_sparse.SparseTensor")
    check_values(layer, values, dtype)
    return values.to(dtype).contiguous()


def check_values(layer: str, values: Tensor, dtype: torch.dtype) -> None:
    """A sparse adjacency's values used as edge weights: one per entry, of
    x's dtype (under autocast: any it casts), as an `edge_weight` must be
    (PyG's spmm refuses another dtype too; a bool or integer adjacency was
    silently cast)."""
    if values.dim() != 1:
        raise ValueError(f"{layer}: expected one value per adjacency entry, got "
                         f"values of shape {tuple(values.shape)}")
    if not compatible(values.dtype, dtype, values.device):
        raise TypeError(f"{layer}: the sparse adjacency's values must have x's "
                        f"dtype ({dtype}), got {values.dtype}")


def weighted_aggregate(edge_index: Tensor, num_nodes, h: Tensor,
                       weights: Tensor, aggr: str) -> Tensor:
    """sum_j w_ij h_j over the in-edges of every node (the unnormalised
    weighted GCN template), divided by the in-edge count for "mean" (PyG's
    spmm mean: the weighted sum over the number of entries). `h` and
    `weights` have the op's dtype. `num_nodes`: a node count, or a bipartite
    graph's (num_src, num_dst), then `h` has the sources' rows and the
    result the destinations'."""
    bipartite = isinstance(num_nodes, tuple)
    out = propagate(None, "gcn", (int(h.size(1)), elem(h), False, True, bipartite),
                    edge_index, num_nodes, h, weights)
    if aggr == "mean":
        # Counted in float32 at least: a bfloat16 count stops at 256.
        wide = torch.promote_types(h.dtype, torch.float32)
        count = torch.zeros(num_nodes[1] if bipartite else num_nodes, dtype=wide,
                            device=h.device)
        count = count.index_add(0, edge_index[1], torch.ones_like(weights, dtype=wide))
        out = (out / count.clamp(min=1).unsqueeze(1)).to(h.dtype)
    return out


def is_sparse(adj) -> bool:
    """Whether the layer's graph argument is a sparse adjacency (attribute
    reads only: safe to trace)."""
    return _is_sparse_tensor(adj) or \
        getattr(adj, "layout", torch.strided) != torch.strided


def refuse_sparse_extras(layer: str, adj, **extras) -> None:
    """Arguments a sparse adjacency `adj` cannot come with (PyG's own limits,
    or per-edge data in an edge order the caller cannot know): refused by
    name."""
    if not is_sparse(adj):
        return
    for name, value in extras.items():
        if value is not None and value is not False:
            raise NotImplementedError(
                f"{layer}: {name} with a sparse adjacency is not supported by "
                f"gnnc.nn; pass edge_index [2, E] instead")


def size_pair(layer: str, size) -> tuple:
    """MessagePassing's `size` (not None) as a tuple of two entries, else a
    TypeError / ValueError saying what `size` is."""
    if isinstance(size, Tensor) or not isinstance(size, (tuple, list, torch.Size)):
        raise TypeError(f"{layer}: size must be None or a pair (num_src, num_dst), "
                        f"got {type(size).__name__} {size!r}")
    if len(size) != 2:
        raise ValueError(f"{layer}: size must be (num_src, num_dst), got {size!r}")
    return tuple(size)


def check_size(layer: str, size, num_nodes: int) -> None:
    """MessagePassing's `size`: None or (num_nodes, num_nodes), each a node
    count in [0, 2^63 - 1]; bipartite sizes are refused."""
    if size is None:
        return
    size = size_pair(layer, size)
    for k, s in enumerate(size):
        if s is None:
            continue
        try:
            _core._check_num_nodes(s, f"size[{k}] (num_nodes)")
        except (TypeError, ValueError) as e:
            raise type(e)(f"{layer}: {str(e).removeprefix('gnnc: ')}") from None
    if size != (num_nodes, num_nodes):
        refuse(layer, f"size={size!r}", "bipartite graphs; only (num_nodes, num_nodes)")


def elem(x: Tensor) -> str:
    return _DTYPES[x.dtype]


# --------------------------------------------------------------------------
# Mixed precision (torch.autocast).
# --------------------------------------------------------------------------
#
# A layer's gnnc op is one of autocast's lower-precision ops, as linear and
# matmul are: under torch.autocast on its device it runs in the autocast
# dtype (bfloat16 or float16), every floating tensor it reads cast to that
# dtype (the features, already in it when a linear made them, and the
# parameters and edge weights, f32, as autocast casts a linear's weight), and
# its results are in it; float64 is left alone, as autocast leaves it. Outside
# autocast the op runs in the layer's dtype: x and the parameters must agree
# (a layer converted with .to(torch.bfloat16) runs in bfloat16).
# docs/Python.md, "Mixed precision".

_AUTOCAST_CAST = (torch.float32, torch.bfloat16, torch.float16)


# Device types autocast knows, asked once per type: torch.compile (2.11)
# cannot trace torch.amp.is_autocast_available, so the answers for the usual
# types are known before it runs.
_AUTOCAST_TYPES = {kind: torch.amp.is_autocast_available(kind) for kind in ("cpu", "cuda")}
_any_autocast = getattr(torch._C, "_is_any_autocast_enabled", lambda: True)


def autocast_dtype(device: torch.device) -> Optional[torch.dtype]:
    """The dtype torch.autocast gives lower-precision ops on `device`, or
    None where autocast is off there."""
    # Every layer call asks: autocast off anywhere is one C call (outside
    # torch.compile, which traces the checks below instead).
    if not _any_autocast() and not torch.compiler.is_compiling():
        return None
    kind = device.type
    available = _AUTOCAST_TYPES.get(kind)
    if available is None:
        available = _AUTOCAST_TYPES[kind] = torch.amp.is_autocast_available(kind)
    if not available or not torch.is_autocast_enabled(kind):
        return None
    return torch.get_autocast_dtype(kind)


def compatible(a: torch.dtype, b: torch.dtype, device: torch.device) -> bool:
    """Whether tensors of dtypes `a` and `b` may meet in a layer's op on
    `device`: the same dtype, or, under autocast there, two it casts
    (float32, bfloat16, float16)."""
    if a == b:
        return True
    return (autocast_dtype(device) is not None and a in _AUTOCAST_CAST and
            b in _AUTOCAST_CAST)


def promotes(a: torch.dtype, b: torch.dtype, device: torch.device) -> bool:
    """Whether a floating edge tensor of dtype `a` may meet x of dtype `b` in
    a layer whose PyG counterpart multiplies or adds it to the messages
    (GCN's edge_weight, GINE's edge_attr without edge_dim): outside
    autocast any floating dtype, PyTorch promoting the two (PyG's result
    then has the promoted dtype), and so under autocast with a float64 of
    the two (`autocasts`); else as `compatible`."""
    if not autocasts(device, a, b):
        return a.is_floating_point
    return compatible(a, b, device)


def autocasts(device: torch.device, *dtypes: Optional[torch.dtype]) -> bool:
    """Whether torch.autocast is on on `device` and casts what a layer
    combines, of `dtypes` (None: none): none is float64, which autocast
    leaves as it is (PyTorch then promotes the rest with it, as outside
    autocast)."""
    return autocast_dtype(device) is not None and torch.float64 not in dtypes


def promoting_dtype(x, dtype: torch.dtype) -> Optional[torch.dtype]:
    """check_inputs' (bipartite_inputs') `dtype` for a layer whose PyG
    counterpart only multiplies or adds its parameter to terms of x (GIN's
    and GINE's eps, AGNN's beta: one-element tensors, which PyTorch promotes
    with x; no Linear reads x): under autocast on x's device the
    parameter's `dtype`, held as every layer holds it; outside autocast,
    or under it with a float64 among x and the parameter (`autocasts`),
    None, x of any floating dtype, the layer's result then of the promoted
    dtype (param_promoted), as PyG's. `x`: a tensor or a (source, target)
    pair."""
    xs = tuple(x) if isinstance(x, (tuple, list)) else (x,)
    first = xs[0] if xs else None
    if isinstance(first, Tensor) and not autocasts(
            first.device, dtype, *(v.dtype for v in xs if isinstance(v, Tensor))):
        return None
    return dtype


def param_promoted(dt: torch.dtype, x: Tensor, dtype: torch.dtype) -> torch.dtype:
    """The dtype a layer of promoting_dtype's runs in: `dt`
    (compute_dtype's), outside autocast (or under it with a float64 among
    x's and the parameter's dtypes) promoted with its parameter's `dtype`,
    the dtype of PyG's result."""
    if autocasts(x.device, x.dtype, dtype):
        return dt
    return promoted(dt, dtype)


def edge_promoted(dt: torch.dtype, edge: Optional[Tensor]) -> torch.dtype:
    """The dtype a layer's op runs in (`dt`: compute_dtype's) with an edge
    tensor `edge` that PyG's layer promotes the messages with (`promotes`):
    outside autocast (or under it with a float64 of the two: `autocasts`)
    the promoted dtype, PyG's messages'; else `dt`."""
    if edge is None or autocasts(edge.device, dt, edge.dtype):
        return dt
    return promoted(dt, edge.dtype)


def compute_dtype(x: Tensor, *others: Optional[torch.dtype]) -> torch.dtype:
    """The dtype a layer's op runs in, for the input `x` and the dtypes of
    the layer's parameters `others` (None: none): under torch.autocast on
    x's device the autocast dtype, unless a float64 is involved; else x's."""
    low = autocast_dtype(x.device)
    if low is not None and x.dtype in _AUTOCAST_CAST and \
            all(d is None or d in _AUTOCAST_CAST for d in others):
        return low
    return x.dtype


# The op's result is in the autocast dtype; PyG's layer, a chain of PyTorch
# ops, ends in whatever type promotion and autocast's lists make of its
# operands there (a float32 bias or edge weight meeting a half tensor gives
# float32). Each layer converts the op's result to that dtype, so that its
# output has PyG's dtype in every combination of autocast, parameter and
# input dtypes (python/tests/test_autocast.py).

_HALVES = (torch.bfloat16, torch.float16)


def promoted(*dtypes: Optional[torch.dtype]) -> torch.dtype:
    """PyTorch's type promotion of `dtypes`, those None skipped (the first
    is not None)."""
    out = dtypes[0]
    for d in dtypes[1:]:
        if d is not None and d != out:
            out = torch.promote_types(out, d)
    return out


def widened(dtype: torch.dtype, device: torch.device) -> torch.dtype:
    """The dtype of PyTorch's `sum`, `exp`, `norm` or `reciprocal` of a
    `dtype` tensor on `device` as called now: float32 under CUDA's autocast,
    whose float32 list holds them (PyG's attention scores and softmax,
    F.normalize and FastRGCN's `1 / count` are float32 there), else `dtype`
    (the CPU's list holds none of them)."""
    if device.type == "cuda" and dtype in _AUTOCAST_CAST and \
            torch.is_autocast_enabled("cuda"):
        return torch.float32
    return dtype


def as_dtype(tensor: Tensor, dtype: torch.dtype) -> Tensor:
    """`tensor` in `dtype` (itself when it already is)."""
    return tensor if tensor.dtype == dtype else tensor.to(dtype)


def linear_operands(linears) -> list:
    """The operands of linear maps folded into a gnn function, in order:
    each one's weight, then its bias where it has one."""
    out = []
    for lin in linears:
        out.append(lin.weight)
        bias = lin.bias  # (read once: Module.__getattr__)
        if bias is not None:
            out.append(bias)
    return out


def cast(dtype: torch.dtype, tensor: Tensor) -> Tensor:
    """`tensor` in `dtype`, contiguous: an operand of the op (itself when it
    already is; `Tensor.to` to its own dtype costs a dispatch)."""
    if tensor.dtype != dtype:
        tensor = tensor.to(dtype)
    return tensor.contiguous()


def casts(dtype: torch.dtype, *tensors: Tensor) -> list:
    """`cast` of each of `tensors`."""
    return [cast(dtype, t) for t in tensors]


def operand(dtype: torch.dtype, tensor: Tensor) -> Tensor:
    """An operand of a layer's op that runs in `dtype`, contiguous: under
    torch.autocast, where `dtype` is its half type, a float32, bfloat16 or
    float16 tensor as it is (the op's function stores that argument in the
    tensor's dtype and converts it on the device, inside its run:
    `function_for`), so that the call makes no `aten::to`, no copy and no
    autograd node of its own, and the gradient comes back in the tensor's
    dtype, rounded as autocast's cast would give it; else `cast`'s."""
    have = tensor.dtype
    if have != dtype and dtype in _HALVES and have in _AUTOCAST_CAST and _any_autocast():
        return tensor.contiguous()
    return cast(dtype, tensor)


def operands(dtype: torch.dtype, *tensors: Tensor) -> list:
    """`operand` of each of `tensors`."""
    return [operand(dtype, t) for t in tensors]


# --------------------------------------------------------------------------
# Graphs derived from edge_index, cached per edge_index tensor.
# --------------------------------------------------------------------------
#
# gnnc caches its graph structures per edge_index tensor object, so a graph a
# layer derives (flipped, with self-loops) must be the same tensor object
# from call to call for that cache to hit. Derived graphs are therefore cached
# here per input tensor object, valid while it holds the indices they were
# derived from: each lookup compares its contents with a copy (gnnc's
# _Snapshot, the check gnnc's own graph cache makes), so an edge_index
# written in any way (in place, through .numpy() or .data) is derived anew,
# and its node ids checked. The derived tensors are gnnc's own (private):
# gnnc's graph cache does not compare them again, so a layer call costs one
# contents check of its input edge_index. Meta tensors (shapes only) are
# never cached.

_DERIVED = {}
_DERIVED_SIZE = 32


class _Derived:
    """What was derived from one input tensor (or one tuple of them):
    {what: result}."""

    __slots__ = ("refs", "snapshots", "results")

    def __init__(self, refs, snapshots):
        self.refs = refs
        self.snapshots = snapshots
        self.results = {}

    def alive(self, inputs: tuple) -> bool:
        for r, t in zip(self.refs, inputs):
            if r() is not t:
                return False
        return True

    def stale(self) -> bool:
        for s in self.snapshots:
            if s.stale():
                return True
        return False

    def matches(self, inputs: tuple) -> bool:
        for s, t in zip(self.snapshots, inputs):
            if not s.matches(t):
                return False
        return True


def _snapshots(inputs: tuple) -> tuple:
    """One _Snapshot per input, all sharing the first one's change flag on
    CUDA: a derived graph is built from all of them, and a change behind
    the version counter of any poisons the calls on it (_make_private)."""
    snaps = tuple(_core._Snapshot.of(t) for t in inputs)
    flag = next((s.flag for s in snaps if s.flag is not None), None)
    for s in snaps:
        if s.flag is not None:
            s.flag = flag
    return snaps


def _derived(inputs, what: tuple, build):
    """`build()`'s result, cached per input tensor (an edge_index) or per
    tuple of input tensors (a graph built from several) and `what`."""
    if isinstance(inputs, tuple):
        key = tuple(id(t) for t in inputs)
    else:
        inputs, key = (inputs,), (id(inputs),)
    rec = _DERIVED.get(key)
    if rec is not None and not rec.alive(inputs):
        rec = None
    if rec is not None and rec.stale():
        _DERIVED.pop(key, None)
        if len(inputs) == 1:
            raise _core._stale_error(inputs[0])
        # One flag for all of them: which one changed is not known.
        raise RuntimeError(
            f"gnnc: one of the tensors a graph was built from (shapes "
            f"{', '.join(str(list(t.shape)) for t in inputs)}) was changed after gnnc "
            f"built the graph, without PyTorch's version counter seeing it (a write "
            f"through .data, DLPack or a raw kernel); the gnnc calls on it since then "
            f"returned NaN. The graph is rebuilt on the next call; write these tensors "
            f"with PyTorch operations, or pass new ones.")
    if rec is None or not rec.matches(inputs):
        # New, or its contents changed: everything is derived anew.
        _DERIVED.pop(key, None)
        _core._evict_oldest(_DERIVED, _DERIVED_SIZE)

        # An input died: free what was derived from it. The table is bound
        # here: at interpreter exit the module's globals may be gone first.
        def drop(_ref, key=key, table=_DERIVED):
            entry = table.get(key)
            if entry is not None and _ref in entry.refs:
                del table[key]

        rec = _Derived(tuple(weakref.ref(t, drop) for t in inputs), _snapshots(inputs))
        _DERIVED[key] = rec
    hit = rec.results.get(what)
    # The cached tensors are handed out again on every hit: one written
    # since (through PyTorch: gnnc.utils hands them to the caller) is
    # derived anew.
    if hit is not None and _same_versions(hit[1], hit[2]):
        return hit[0]
    # Normal tensors, also under inference mode: kept for later calls,
    # which may train on them.
    result = _core._outside_inference_mode(build)
    tensors = _tensors(result)
    # Calls on the derived graphs honour the inputs' change check.
    for t in tensors:
        if _core._is_private(t):
            _core._make_private(t, rec.snapshots[0].flag)
    rec.results[what] = (result, tensors, _versions(tensors))
    return result


def _tensors(result) -> list:
    """The tensors of a derived result, through nested tuples (RGCNConv's
    spans)."""
    out = []
    for t in (result if isinstance(result, tuple) else (result,)):
        if isinstance(t, Tensor):
            out.append(t)
        elif isinstance(t, tuple):
            out.extend(_tensors(t))
    return out


def _versions(tensors: list) -> list:
    """The version counters of `tensors` (_tensors of a derived result)."""
    return [_core._version_of(t) for t in tensors]


def _same_versions(tensors: list, versions: list) -> bool:
    """Whether none of `tensors` was written since `versions` were read."""
    for t, v in zip(tensors, versions):
        if _core._version_of(t) != v:
            return False
    return True


def flip(edge_index: Tensor, flow: str) -> Tensor:
    """PyG's flow='target_to_source' reads edge_index[0] as the target."""
    if flow != "target_to_source":
        return edge_index
    if torch.compiler.is_compiling() or edge_index.is_meta:
        return edge_index.flip(0)
    return _derived(edge_index, ("flip",),
                    lambda: _core._make_private(edge_index.flip(0)))


def public(edge_index: Tensor) -> Tensor:
    """A graph handed back to the caller (attention weights): a copy of a
    private one, which the caller might write."""
    return edge_index.clone() if _core._is_private(edge_index) else edge_index


# --------------------------------------------------------------------------
# Self-loops: PyG's remove_self_loops + add_self_loops, without a
# data-dependent shape.
# --------------------------------------------------------------------------
#
# The graph handed to gnnc is `[edge_index | (n, n) for every node n]`
# (E + N edges, the self-loops last) plus a mask `keep` that is 0 on the input's
# own self-loops: the layers give those edges no weight (score -inf before a
# softmax, weight 0 in GCN), which is exactly removing them. The shapes only
# depend on E and N, so this traces under torch.compile without a graph break.
# In eager mode a graph without self-loops needs no mask (`keep` is None):
# the layers then run the plain templates, which compile to fewer kernels.


def _with_self_loops(edge_index: Tensor, num_nodes: int, dtype: torch.dtype,
                     sides: Union[Tuple[int, int], int, None] = None):
    n = num_nodes
    e = edge_index.size(1)
    ei = edge_index.long()
    is_loop = ei[0] == ei[1]
    any_loop = False
    if e:
        # The ids' range and whether any edge is a self-loop: one read back
        # (one synchronisation on CUDA). A bipartite graph's ids each
        # against their side's count (`sides`), named as the graph cache
        # names them (an int `sides`: one bound for both, _self_loops_op's).
        (any_loop,) = _core._check_ids(ei, n if sides is None else sides, is_loop.any(),
                                       hint=" (x.size(0))")
    loops = torch.arange(n, device=ei.device, dtype=torch.int64)
    aug = _core._make_private(torch.cat([ei, loops.unsqueeze(0).expand(2, n)], dim=1))
    keep = torch.cat([~is_loop, torch.ones(n, dtype=torch.bool, device=ei.device)])
    return aug, keep.to(dtype), bool(any_loop)


def _cached_self_loops(edge_index: Tensor, num_nodes: int, dtype: torch.dtype,
                       sides: Union[Tuple[int, int], int, None] = None):
    return _derived(edge_index, ("loops", num_nodes, dtype, sides),
                    lambda: _with_self_loops(edge_index, num_nodes, dtype, sides))


# Outside CUDA graphs (it hands out cached tensors and checks its input on
# every call): torch.compile's mode="reduce-overhead" runs it between them.
# Its schema is kept as it was (a graph torch.compile cached on disk calls
# the op as it was then); `bound` >= 0, the ids' range where it is not
# num_nodes, only comes from such a graph: gnnc now calls
# bipartite_self_loops there.
@torch.library.custom_op("gnnc_nn::self_loops", mutates_args=(),
                         tags=_core._NOT_IN_CUDA_GRAPHS)
def _self_loops_op(edge_index: Tensor, num_nodes: int,
                   dtype: torch.dtype, bound: int = -1) -> tuple[Tensor, Tensor]:
    return _cached_self_loops(edge_index, num_nodes, dtype,
                              None if bound < 0 else bound)[:2]


@_self_loops_op.register_fake
def _(edge_index, num_nodes, dtype, bound=-1):
    return _self_loops_fake(edge_index, num_nodes, dtype)


# A bipartite graph's: its ids checked against (num_src, num_dst).
@torch.library.custom_op("gnnc_nn::bipartite_self_loops", mutates_args=(),
                         tags=_core._NOT_IN_CUDA_GRAPHS)
def _bipartite_self_loops_op(edge_index: Tensor, num_nodes: int, dtype: torch.dtype,
                             num_src: int, num_dst: int) -> tuple[Tensor, Tensor]:
    return _cached_self_loops(edge_index, num_nodes, dtype, (num_src, num_dst))[:2]


@_bipartite_self_loops_op.register_fake
def _(edge_index, num_nodes, dtype, num_src, num_dst):
    return _self_loops_fake(edge_index, num_nodes, dtype)


def _self_loops_fake(edge_index: Tensor, num_nodes: int, dtype: torch.dtype):
    e = edge_index.size(1)
    aug = edge_index.new_empty((2, e + num_nodes), dtype=torch.int64)
    keep = edge_index.new_empty((e + num_nodes,), dtype=dtype)
    return aug, keep


def with_self_loops(edge_index: Tensor, num_nodes: int, dtype: torch.dtype,
                    sides: Optional[Tuple[int, int]] = None):
    """(the graph [2, E + N]: edge_index then (n, n) for every node n <
    num_nodes; keep [E + N] of `dtype`: 0 on the input's self-loops, else 1,
    or None in eager mode when the input has no self-loops). `sides`: a
    bipartite graph's (num_src, num_dst), which its ids are checked against
    (its loops are min(num_src, num_dst)); None: one node set of
    num_nodes."""
    if torch.compiler.is_compiling() or edge_index.is_meta:
        # Traced, or shapes only: the op (its fake gives the shapes), the mask
        # always present.
        if sides is None:
            return _self_loops_op(edge_index, num_nodes, dtype)
        return _bipartite_self_loops_op(edge_index, num_nodes, dtype, *sides)
    aug, keep, any_loop = _cached_self_loops(edge_index, num_nodes, dtype, sides)
    return aug, (keep if any_loop else None)


# --------------------------------------------------------------------------
# Attention dropout.
# --------------------------------------------------------------------------

def attention_dropout_mask(shape, p: float, dtype: torch.dtype,
                           device: torch.device) -> Tensor:
    """F.dropout's mask: bernoulli(1 - p) / (1 - p) (all zeros for p = 1).
    Tests replace this function to compare with PyG under the same mask."""
    if p >= 1.0:
        return torch.zeros(shape, dtype=dtype, device=device)
    # (Scaled in place: one allocation, not two.)
    return torch.empty(shape, dtype=dtype, device=device).bernoulli_(1.0 - p).div_(1.0 - p)


# --------------------------------------------------------------------------
# Running a compiled function.
# --------------------------------------------------------------------------

def propagate(layer: Optional[torch.nn.Module], template: str, config: tuple,
              edge_index: Tensor, num_nodes, *tensors: Tensor,
              results: tuple = ()) -> Tensor:
    """Runs the `gnn` function `_ir.<template>(*config)` on the graph of
    `edge_index` (num_nodes nodes, or a bipartite graph's (num_src,
    num_dst): then a bipartite function's src and dst tensors have their
    side's rows, and a function of one node set's node tensors
    max(num_src, num_dst)) with `tensors` as its arguments after the graph.
    The compiled function is kept per (template, config); `layer` (None:
    none) remembers which it ran last (gnnc.explain; not while torch.compile
    traces). `results`: (position, element type) pairs of the results the
    function returns converted to another type (`returned`).

    The graph's handle is looked up here, where torch.compile traces
    strictly (its gnnc::graph op then yields the handle as a graph value);
    the rest is traced non-strictly (_run)."""
    record = layer is not None and not torch.compiler.is_compiling()
    if record:
        layer.__dict__["_gnnc_function"] = (template, config)  # past Module.__setattr__
    graph = _core._handle(edge_index, num_nodes)
    out = _run(template, config, results, edge_index, num_nodes, graph, *tensors)
    if record:
        # The variant that ran (autocast's stored arguments, frozen
        # gradients, converted results), for gnnc.explain.
        layer.__dict__["_gnnc_ran"] = _RAN.key
    return out


def returned(dtype: torch.dtype, *wants: torch.dtype) -> tuple:
    """propagate's `results` for a function of `dtype` whose caller wants
    its results in `wants` (one per result, in order; PyG's dtypes: under
    autocast a float32 bias promotes the half result): the conversions
    inside the op instead of an `aten::to` (and its autograd node) after
    it. Only among float32, bfloat16 and float16."""
    if dtype not in _AUTOCAST_CAST:
        return ()
    return tuple((i, _DTYPES[w]) for i, w in enumerate(wants)
                 if w != dtype and w in _AUTOCAST_CAST)


def _run_function(template: str, config: tuple, results: tuple, edge_index: Tensor,
                  num_nodes: int, graph, *tensors: Tensor) -> Tensor:
    """propagate's call on graph handle `graph`. torch.compile traces this
    non-strictly: the IR generation and gnnc.compile run as plain Python at
    trace time and only gnnc's custom op lands in the graph, so there is no
    graph break."""
    if type(graph) is not int:
        # Traced (the handle is symbolic): the configuration may hold
        # symbolic sizes. An eager call's (a plain int handle) holds none,
        # and skips the walk.
        config = _concrete(config)
    fn = function_for(template, config, tensors, results)
    # The tensor itself, not a gnnc.Graph (which would copy it on every
    # call): gnnc's graph cache checks it, or trusts it when it is private.
    # The layers made the tensors: the op checks them (no Python checks).
    return fn._apply(edge_index, num_nodes, tensors, graph)


def function_for(template: str, config: tuple, tensors, results: tuple = ()) -> \
        "gnnc.Function":
    """The compiled `_ir.<template>(*config)` a call on `tensors` runs:
    where autograd records, without the gradients of the arguments whose
    tensor needs none (a first layer's features: the backward skips that
    work); under torch.autocast with the arguments that `operand` passed in
    another floating dtype than the function's stored in it (converted
    inside the op, `_ir._Builder`). `results`: (position, element type)
    pairs of results returned in another type than the function's."""
    fn = _function(template, config, (), (), results)
    stored = _stored(fn, tensors) if _any_autocast() else ()
    if stored:
        fn = _function(template, config, (), stored, results)
    grads = fn._grad_args
    if grads and torch.is_grad_enabled():
        frozen = tuple(i for i, t in enumerate(tensors)
                       if i + 1 in grads and not t.requires_grad)
        if frozen and len(frozen) < len(grads):
            fn = _function(template, config, frozen, stored, results)
    return fn


def _stored(fn, tensors) -> tuple:
    """The (position, element type) pairs of `tensors` whose dtype differs
    from the argument's of `fn` (built without any stored in another
    type), where both are dtypes autocast casts; () where none differs."""
    out = []
    args = fn.signature["args"]
    for i, t in enumerate(tensors):
        want = _core._DTYPES.get(args[i + 1].get("dtype"))
        have = t.dtype
        if want is not None and have != want and have in _AUTOCAST_CAST and \
                want in _AUTOCAST_CAST:
            out.append((i, _DTYPES[have]))
    return tuple(out)


def _concrete(config):
    """`config` with Python ints and bools for the symbolic ones that a
    compile with dynamic shapes passes (a feature width read from a tensor):
    the IR is built for the concrete sizes (torch.compile guards on them)."""
    if isinstance(config, (tuple, list)):
        return type(config)(_concrete(c) for c in config)
    if isinstance(config, torch.SymBool):
        return bool(config)
    if isinstance(config, torch.SymInt):
        return int(config)
    if isinstance(config, torch.SymFloat):
        return float(config)
    return config


def _function(template: str, config: tuple, frozen: tuple, stored: tuple = (),
              results: tuple = ()):
    """The compiled `_ir.build(template, config, frozen, stored, results)`,
    kept in _FUNCTIONS."""
    key = (template, config) if not (frozen or stored or results) else \
        (template, config, frozen, stored, results)
    _RAN.key = key
    fn = _FUNCTIONS.get(key)
    if fn is None:
        module, name = _ir.build(template, config, frozen, stored, results)
        fn = gnnc.compile(module, function=name)
        _FUNCTIONS[key] = fn
    return fn


# (template, config) -> its compiled gnnc.Function, (template, config, frozen,
# stored, results) for one built without the gradients of the arguments at
# the positions in `frozen`, with arguments stored in other types (`stored`)
# or results returned in other dtypes (`results`): a call looks it up
# instead of generating and hashing the IR again.
_FUNCTIONS = {}

# The _FUNCTIONS key of the function function_for chose last on this thread
# (its last _function call): the variant a layer ran, for gnnc.explain.
_RAN = threading.local()

# propagate calls `_run`: `_run_function` itself until torch._dynamo is
# loaded, then its torch.compiler.nonstrict_trace wrapper. Importing
# torch._dynamo to decorate it at import time cost every `import gnnc.nn`
# seconds (2-5 s measured) in processes that never compile; dynamo is loaded
# by torch.compile before it traces anything, and the hook below marks
# _run right when dynamo's decorators module has run.
_run = _run_function


def _mark_nonstrict(decorators) -> None:
    global _run, _eagerly, _decorators
    if _run is _run_function:
        _run = decorators.nonstrict_trace(_run_function)
    if _eagerly is _call:
        _eagerly = decorators.disable(_call)
    _decorators = decorators
    while _WAITING:
        _WAITING.pop(0)(decorators)


# torch._dynamo.decorators once loaded; callers of when_dynamo_loads waiting
# for it (gnnc.MessagePassing marks its own runner as _run is marked here).
_decorators = None
_WAITING = []


def when_dynamo_loads(callback) -> None:
    """Calls ``callback(torch._dynamo.decorators)`` now if dynamo is loaded,
    else right when it loads (the hook below)."""
    if _decorators is not None:
        callback(_decorators)
    else:
        _WAITING.append(callback)


class _WhenDynamoLoads(importlib.abc.MetaPathFinder):
    """Calls _mark_nonstrict once torch._dynamo.decorators has executed."""

    NAME = "torch._dynamo.decorators"

    def find_spec(self, fullname, path, target=None):
        if fullname != self.NAME:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _mark_nonstrict(module)

        spec.loader.exec_module = exec_module
        return spec


if _WhenDynamoLoads.NAME in sys.modules:
    _mark_nonstrict(sys.modules[_WhenDynamoLoads.NAME])
else:
    sys.meta_path.insert(0, _WhenDynamoLoads())
