"""Whole models: PyG's `torch_geometric.nn.models.GCN` as one compiled `gnn`
function (every layer's matmul, propagation, bias and activation), so the
compiler sees the whole chain and can run it as one kernel per batch of
small graphs (docs/Codegen.md, "Graph blocks")."""

from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor

from . import _common
from .conv import GCNConv, check_edge_weight, gcn_dtype, gcn_graph

_ACTS = ("'relu'", "None", "'identity'")


def _normalize(name: str) -> str:
    """PyG's resolver's key: case, '-', '_' and ' ' do not matter."""
    return name.lower().replace("-", "").replace("_", "").replace(" ", "")


def _pyg_activation(key: str) -> bool:
    """Whether PyG's `activation_resolver` resolves the normalised name
    `key`: a torch.nn activation module's class name (with or without 'act'
    taken out of it) or 'swish'."""
    names = {"swish"}
    for value in vars(torch.nn.modules.activation).values():
        if isinstance(value, type) and issubclass(value, torch.nn.Module):
            cls = _normalize(value.__name__)
            names |= {cls, cls.replace("act", "")}
    return key in names


def _relu(layer: str, act) -> bool:
    """Whether `act` (PyG's `act`: a name, a module or a function) is ReLU;
    False for no activation. Any other activation PyG takes is refused
    (`NotImplementedError`, naming it); a name PyG's resolver does not know
    is a `ValueError`, as in PyG. Modules count by their exact class: a
    subclass of `torch.nn.ReLU` may compute something else."""
    if act is None:
        return False
    if isinstance(act, str):
        key = _normalize(act)
        if key in ("relu", "identity"):
            return key == "relu"
        if not _pyg_activation(key):
            raise ValueError(f"{layer}: act={act!r} is not an activation PyG resolves "
                             f"(a torch.nn activation's name or 'swish')")
    elif type(act) is torch.nn.ReLU or any(act is f for f in (F.relu, torch.relu)):
        return True
    elif type(act) is torch.nn.Identity:
        return False
    _common.refuse(layer, f"act={act!r}", f"the model runs as one compiled function; "
                   f"supported: {', '.join(_ACTS)}")


class GCN(torch.nn.Module):
    r"""PyG's `models.GCN`: `num_layers` GCNConv layers, the activation (and
    dropout) after every layer but the last, run as ONE compiled `gnn`
    function: per layer `h = x W` (a matmul in the function), the GCN
    propagation, `+ b`, ReLU; `d^-1/2` computed once for all layers.

    Layer `i` is `GCNConv(in_i, out_i)`: `in_channels -> hidden_channels ->
    ... -> out_channels` (`hidden_channels` when `out_channels` is None).
    Parameters: `convs.{i}.lin.weight` [out, in], `convs.{i}.bias` [out], as
    PyG's, so `load_state_dict(pyg_gcn.state_dict())` works.

    Supported: `act` 'relu' or None ('identity'; also `torch.nn.ReLU()`,
    `F.relu`), `dropout` (a mask per hidden layer drawn in PyTorch, passed to
    the function), `act_first` (no effect without `norm`, as in PyG), `bias`
    and GCNConv's `improved`, `add_self_loops`, `normalize`, `flow`;
    `forward(x, edge_index, edge_weight=None)` (`edge_attr`, `batch` and
    `batch_size` have no effect, as in PyG without `norm`). Refused
    (`NotImplementedError`): any other `act` PyG takes (a name PyG cannot
    resolve is a `ValueError`, as in PyG), `norm`, `jk`, `act_kwargs` other
    than `inplace`, `cached=True`, lazy `in_channels=-1`, sparse adjacencies,
    `num_sampled_*_per_hop`, any other keyword. A graph with self-loops or an `edge_weight` runs the same
    model with the graph's self-loops masked / weighted (as `GCNConv`);
    only a loop-free unweighted graph gets the `graph_block` mapping.

    The function takes each `lin.weight` as PyTorch stores it ([out, in],
    contiguous, as PyG's) and its matmul transposes it: no copy.
    """

    def __init__(self, in_channels: int, hidden_channels: int, num_layers: int,
                 out_channels: Optional[int] = None, dropout: float = 0.0,
                 act="relu", act_first: bool = False, act_kwargs=None, norm=None,
                 norm_kwargs=None, jk=None, bias: bool = True, **kwargs):
        super().__init__()
        name = type(self).__name__
        for arg, value in (("norm", norm), ("jk", jk)):
            if value is not None:
                _common.refuse(name, f"{arg}={value!r}", "only None")
        if norm_kwargs:
            _common.refuse(name, "norm_kwargs")
        if act_kwargs and set(act_kwargs) - {"inplace"}:
            _common.refuse(name, f"act_kwargs={act_kwargs!r}", "only 'inplace'")
        if kwargs.get("cached", False):
            _common.refuse(name, "cached=True")
        kwargs.pop("cached", None)
        in_channels = _common.check_channels(name, "in_channels", in_channels)
        if in_channels <= 0:
            _common.refuse(name, f"in_channels={in_channels} (lazy initialisation)")
        self.in_channels = in_channels
        self.hidden_channels = _common.check_channels(name, "hidden_channels",
                                                      hidden_channels)
        if isinstance(num_layers, bool) or not isinstance(num_layers, int) or \
                num_layers < 1:
            raise ValueError(f"{name}: num_layers must be a positive int, got "
                             f"{num_layers!r}")
        self.num_layers = num_layers
        self.out_channels = (hidden_channels if out_channels is None else
                             _common.check_channels(name, "out_channels", out_channels))
        self.dropout = torch.nn.Dropout(p=_common.check_dropout(name, dropout))
        self.relu = _relu(name, act)
        self.act = torch.nn.ReLU() if self.relu else None
        self.act_first = act_first
        sizes = ([in_channels] + [hidden_channels] * (num_layers - 1) +
                 [self.out_channels])
        # GCNConv checks its keywords (flow, aggr, improved, ...) and names
        # the parameters as PyG does.
        self.convs = torch.nn.ModuleList(
            GCNConv(sizes[i], sizes[i + 1], bias=bias, **kwargs)
            for i in range(num_layers))

    def reset_parameters(self) -> None:
        for conv in self.convs:
            conv.reset_parameters()

    @_common.names_graph_errors
    def forward(self, x: Tensor, edge_index: Tensor,
                edge_weight: Optional[Tensor] = None, edge_attr=None, batch=None,
                batch_size=None, num_sampled_nodes_per_hop=None,
                num_sampled_edges_per_hop=None) -> Tensor:
        # As PyG's GCN: edge_attr is not passed to GCNConv, batch and
        # batch_size only reach norms (refused here): no effect.
        name = type(self).__name__
        if num_sampled_nodes_per_hop is not None or num_sampled_edges_per_hop is not None:
            _common.refuse(name, "num_sampled_nodes_per_hop / num_sampled_edges_per_hop "
                           "(trim_to_layer)")
        first = self.convs[0]
        if _common.is_sparse(edge_index):
            _common.refuse(name, "a sparse adjacency", "pass edge_index [2, E]")
        edge_index, _ = _common.check_inputs(name, x, edge_index, self.in_channels,
                                             first.lin.weight.dtype, first.flow)
        n = x.size(0)
        if edge_weight is not None:
            check_edge_weight(name, edge_weight, edge_index, x)
        # The whole model is one op: under autocast it runs in the autocast
        # dtype, the weights and biases cast as autocast casts a linear's.
        # Outside autocast an edge_weight of another dtype promotes PyG's
        # messages: the op runs in that dtype, which only one layer takes
        # (PyG's next layer refuses a first one's output of another dtype
        # than its weights).
        dt = _common.compute_dtype(x, first.lin.weight.dtype)
        low = dt
        dt = _common.edge_promoted(dt, edge_weight)
        if dt != low and self.num_layers > 1:
            raise TypeError(
                f"{name}: edge_weight is {edge_weight.dtype}, which makes the first "
                f"layer's output {dt}, but the next layer's parameters are "
                f"{self.convs[1].lin.weight.dtype} (PyG's GCN raises there too); pass "
                f"edge_weight as {low}")
        # PyG adds one self-loop per node: folded into the formula when the
        # graph has none, else the input's own loops masked or weighted in
        # the graph with one per node (conv.gcn_graph).
        ei, weights, w, fold = gcn_graph(first, _common.flip(edge_index, first.flow), n,
                                         dt, edge_weight)
        normalize = first.normalize
        tensors = [_common.cast(dt, x)]
        for conv in self.convs:
            tensors.append(_common.cast(dt, conv.lin.weight))
            if conv.bias is not None:
                tensors.append(_common.cast(dt, conv.bias))
        if w is not None:
            tensors.append(_common.cast(dt, w))
        p = self.dropout.p
        dropout = self.training and p > 0 and self.num_layers > 1
        if dropout:
            tensors += [_common.attention_dropout_mask((n, self.hidden_channels), p,
                                                       dt, x.device)
                        for _ in range(self.num_layers - 1)]
        sizes = (self.in_channels,) + tuple(c.out_channels for c in self.convs)
        config = (sizes, _common._DTYPES[dt], first.bias is not None, self.relu, weights,
                  normalize, fold, dropout)
        out = _common.propagate(self, "gcn_model", config, ei, n, *tensors)
        if dt in _common._HALVES:
            # PyG's result dtype: each GCNConv's (conv.gcn_dtype) on the
            # previous one's output.
            d = x.dtype
            for conv in self.convs:
                d = gcn_dtype(conv, dt, d, edge_weight)
            out = _common.as_dtype(out, d)
        return out

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.in_channels}, {self.out_channels}, "
                f"num_layers={self.num_layers})")

