"""Whole models: PyG's `BasicGNN` models (`GCN`, `GraphSAGE`, `GIN`, `GAT`)
as stacks of gnnc.nn layers with PyG's activations, normalisations, dropout
and jumping knowledge in PyTorch. `GCN` as a plain stack (ReLU or no
activation, no norm, no jk) runs as one compiled `gnn` function (every
layer's matmul, propagation, bias and activation), so the compiler sees the
whole chain and can run it as one kernel per batch of small graphs
(docs/Codegen.md, "Graph blocks")."""

import copy
import inspect
import operator
import types
from typing import List, Optional

import torch
import torch.fx
import torch.nn.functional as F
from torch import Tensor

from . import _common
from .attention import GATConv, GATv2Conv
from .conv import (GCNConv, GINConv, SAGEConv, _global_hooks, _observed, check_edge_weight,
                   gcn_dtype, gcn_graph, gcn_run_dtype)
from ._plan import _MISSING, _Plan
from .norm import BatchNorm, LayerNorm

def _normalize(name: str) -> str:
    """PyG's resolver's key: case, '-', '_' and ' ' do not matter."""
    return name.lower().replace("-", "").replace("_", "").replace(" ", "")


# --------------------------------------------------------------------------
# PyG's layer-wise inference (BasicGNN.inference_per_layer / inference).
# --------------------------------------------------------------------------


def _pyg_neighbor_loader(loader) -> bool:
    """Whether `loader` is PyG's `NeighborLoader` (PyG is optional: imported
    only for an object of one of its modules)."""
    if not type(loader).__module__.startswith("torch_geometric"):
        return False
    from torch_geometric.loader import NeighborLoader
    return isinstance(loader, NeighborLoader)


def _inference_source(name: str, loader):
    """`loader`'s node features (every node's, the table its batches gather
    `x` from) and its fan-outs, checked as PyG's `inference` asserts (a
    `NeighborLoader` whose seeds are all the nodes, one hop) and, beyond
    PyG, that its batches hold the seeds 0, 1, ..., N-1 in order (the
    output's rows are the batches' seeds concatenated: a shuffled, reordered
    or truncated loader would give rows of other nodes; PyG's answer then is
    silently wrong)."""
    from ..loader import NeighborLoader
    if isinstance(loader, NeighborLoader):
        x, n, seeds = loader._node_features(), loader.num_nodes, loader.input_nodes
        fanouts = list(loader.num_neighbors)
        batch_size, shuffle, drop_last = loader.batch_size, loader.shuffle, loader.drop_last
        if loader.num_replicas is not None:
            raise ValueError(f"{name}: expects a loader over every node, got one over "
                             f"rank {loader.rank}'s share of {loader.num_replicas} "
                             f"(num_replicas)")
    elif _pyg_neighbor_loader(loader):
        data = loader.data
        if loader.input_data.input_type is not None or \
                not isinstance(loader.node_sampler.num_neighbors.values, (list, tuple)):
            raise NotImplementedError(f"{name}: a loader over a heterogeneous graph is "
                                      f"not supported (the models are homogeneous)")
        x, n, seeds = getattr(data, "x", None), data.num_nodes, loader.input_data.node
        fanouts = list(loader.node_sampler.num_neighbors.values)
        batch_size, drop_last = loader.batch_size, loader.drop_last
        shuffle = isinstance(loader.sampler, torch.utils.data.RandomSampler)
    else:
        raise TypeError(f"{name}: expects a NeighborLoader (gnnc.loader's or "
                        f"torch_geometric.loader's), got {type(loader).__name__}")
    if seeds.numel() != n:
        raise ValueError(f"{name}: expects a loader whose seeds are every node "
                         f"(input_nodes=None), got {seeds.numel()} seeds for "
                         f"{n} nodes")
    if len(fanouts) != 1:
        raise ValueError(f"{name}: expects a loader of one hop (num_neighbors=[-1]: "
                         f"the model runs one layer at a time), got num_neighbors="
                         f"{fanouts}")
    if shuffle:
        raise ValueError(f"{name}: expects a loader with shuffle=False (the output's "
                         f"rows are the batches' seeds in order)")
    if not torch.equal(seeds, torch.arange(n, device=seeds.device)):
        raise ValueError(f"{name}: expects a loader whose seeds are the nodes in "
                         f"order 0, 1, ..., {n - 1} (input_nodes=None), got them in "
                         f"another order")
    if drop_last and batch_size and n % batch_size:
        raise ValueError(f"{name}: expects a loader that yields every node, got "
                         f"drop_last=True with {n} nodes in batches of {batch_size}")
    if not isinstance(x, Tensor):
        raise ValueError(f"{name}: expects the loader's data to hold node features "
                         f"x, got {type(x).__name__}")
    return x


class _LayerwiseInference:
    """PyG's `BasicGNN.inference_per_layer` and `inference`: the model one
    layer at a time over a one-hop `NeighborLoader` (every node's output of
    layer `i` computed batch by batch, then the next layer from those), for
    graphs whose full forward does not fit. For a model with `convs`,
    `norms`, `act`, `act_first`, `jk_mode`, `num_layers` (and `lin` with
    `jk`)."""

    @torch.no_grad()
    def inference_per_layer(self, layer: int, x: Tensor, edge_index,
                            batch_size: int) -> Tensor:
        """Layer `layer` on a batch, the first `batch_size` rows (its seeds)
        kept; then, as PyG's, the activation and the norm (without `batch`)
        unless it is the last layer without `jk`, and `lin` after the last
        one with `jk`. No dropout (as PyG)."""
        if isinstance(layer, bool) or not isinstance(layer, int) or \
                not 0 <= layer < self.num_layers:
            raise IndexError(f"{type(self).__name__}.inference_per_layer: layer must "
                             f"be an int in [0, {self.num_layers}), got {layer!r}")
        x = self.convs[layer](x, edge_index)[:batch_size]
        if layer == self.num_layers - 1 and self.jk_mode is None:
            return x
        if self.act is not None and self.act_first:
            x = self.act(x)
        x = self.norms[layer](x)
        if self.act is not None and not self.act_first:
            x = self.act(x)
        if layer == self.num_layers - 1 and hasattr(self, "lin"):
            x = self.lin(x)
        return x

    @torch.no_grad()
    def inference(self, loader, device=None, embedding_device="cpu",
                  progress_bar: bool = False, cache: bool = False) -> Tensor:
        """Every node's output, layer by layer over `loader` (gnnc's or PyG's
        `NeighborLoader`, `num_neighbors=[-1]`, seeds every node in order):
        for each layer, each batch's rows of the previous layer's output
        (`x[batch.n_id]`, the loader's `x` for the first) moved to `device`,
        `inference_per_layer`, the result moved to `embedding_device`.
        `cache`: the batches of the first layer (`n_id`, `batch_size`, the
        graph on `device`) replayed for the others, as PyG's `CachedLoader`.
        `jk` other than None / 'last', training mode, a loader of more than
        one hop or one that does not yield every node once in order raise,
        naming what is wrong."""
        name = f"{type(self).__name__}.inference"
        if self.jk_mode not in (None, "last"):
            raise ValueError(f"{name}: expects jk None or 'last' (layer by layer "
                             f"there is no jumping knowledge over the layers), got "
                             f"jk={self.jk_mode!r}")
        x_all = _inference_source(name, loader)
        if self.training:
            raise RuntimeError(f"{name}: expects the model in eval mode (no dropout, "
                               f"the norms' running statistics), got training mode; "
                               f"call model.eval() first")
        pbar = None
        if progress_bar:
            from tqdm import tqdm
            pbar = tqdm(total=len(self.convs) * len(loader))
            pbar.set_description("Inference")
        x_all = x_all.to(embedding_device)
        cached: List = []
        for i in range(self.num_layers):
            xs: List[Tensor] = []
            for batch in (cached if cache and i > 0 else loader):
                graph = batch.adj_t if hasattr(batch, "adj_t") else batch.edge_index
                if cache and i == 0:
                    # PyG's CachedLoader with inference's transform: the
                    # batch's ids, size and graph, on `device`.
                    batch = types.SimpleNamespace(
                        n_id=batch.n_id.to(device), batch_size=batch.batch_size,
                        edge_index=graph.to(device))
                    cached.append(batch)
                # The loader's ids may live elsewhere (gnnc's on its device).
                x = x_all[batch.n_id.to(x_all.device)].to(device)
                x = self.inference_per_layer(i, x, graph.to(device), batch.batch_size)
                xs.append(x.to(embedding_device))
                if pbar is not None:
                    pbar.update(1)
            x_all = torch.cat(xs, dim=0)
        if pbar is not None:
            pbar.close()
        return x_all


# --------------------------------------------------------------------------
# PyG's BasicGNN models (GraphSAGE, GIN, GAT) as stacks of gnnc.nn layers.
# --------------------------------------------------------------------------


def swish(x: Tensor) -> Tensor:
    """PyG's `swish` activation (`act='swish'`)."""
    return x * x.sigmoid()


def resolve_activation(act, act_kwargs=None):
    """PyG's `activation_resolver`: a name (case, '-', '_' and ' ' do not
    matter, nor an 'act' in the class name) gives a new instance of that
    `torch.nn.modules.activation` class (built with `act_kwargs`) or the
    function `swish`; anything else (a module, a function, None) is
    returned as it is. An unknown name is a ValueError, as in PyG."""
    if not isinstance(act, str):
        return act
    key = _normalize(act)
    choices = [v for v in vars(torch.nn.modules.activation).values()
               if isinstance(v, type) and issubclass(v, torch.nn.Module)] + [swish]
    for cls in choices:
        name = _normalize(cls.__name__)
        if key in (name, name.replace("act", "")):
            return cls(**(act_kwargs or {})) if isinstance(cls, type) else cls
    raise ValueError(f"Could not resolve '{act}' among choices "
                     f"{sorted(c.__name__ for c in choices)}")


# torch_geometric.nn.norm's classes, in the order PyG's resolver tries them.
_PYG_NORMS = ("BatchNorm", "HeteroBatchNorm", "InstanceNorm", "LayerNorm",
              "HeteroLayerNorm", "GraphNorm", "GraphSizeNorm", "PairNorm",
              "MeanSubtractionNorm", "MessageNorm", "DiffGroupNorm")
_NORMS = {"BatchNorm": BatchNorm, "LayerNorm": LayerNorm}


def resolve_norm(model: str, norm, channels: int, norm_kwargs=None):
    """PyG's `normalization_resolver` for `channels` features: 'batch_norm'
    ('BatchNorm', 'batch', ...) and 'layer_norm' give gnnc.nn.norm's
    `BatchNorm` / `LayerNorm` (PyG's, in plain PyTorch) built with
    `norm_kwargs`; any other name of a PyG normalisation is refused
    (NotImplementedError naming it); an unknown name is a ValueError, as in
    PyG; anything that is not a string (None, a module) is returned as it
    is."""
    if not isinstance(norm, str):
        return norm
    key = _normalize(norm)
    for name in _PYG_NORMS:
        cls = _normalize(name)
        if key in (cls, cls.replace("norm", "")):
            if name not in _NORMS:
                _common.refuse(model, f"norm={norm!r} (PyG's {name})",
                               "supported: 'batch_norm', 'layer_norm' or a module")
            return _NORMS[name](channels, **(norm_kwargs or {}))
    raise ValueError(f"Could not resolve '{norm}' among choices {set(_PYG_NORMS)}")


def _takes_batch(module) -> bool:
    """PyG's `supports_norm_batch`: whether `module.forward` takes `batch`."""
    if not hasattr(module, "forward"):
        return False
    return "batch" in inspect.signature(module.forward).parameters


class _MLP(torch.nn.Module):
    """What PyG's GIN model builds as each `GINConv`'s `nn`: PyG's
    `models.MLP(channel_list, act=act, act_first=act_first, norm=norm,
    norm_kwargs=norm_kwargs)` (no dropout, a plain last layer), made of
    gnnc's `Linear` (PyG's names and initialisers, lazy -1 too) and the
    resolved norms: `lins.{i}.weight`, `lins.{i}.bias`, `norms.{i}.*` (and
    `act.*` for an activation with parameters, the model's own module) as
    PyG names them."""

    def __init__(self, channel_list: List[int], act, act_first: bool, norm,
                 norm_kwargs, model: str):
        super().__init__()
        self.channel_list = list(channel_list)
        self.act = act
        self.act_first = act_first
        self.plain_last = True
        self.dropout = [0.0] * (len(channel_list) - 1)
        self.lins = torch.nn.ModuleList(
            _common.Linear(i, o) for i, o in zip(channel_list[:-1], channel_list[1:]))
        self.norms = torch.nn.ModuleList()
        for channels in channel_list[1:-1]:
            layer = resolve_norm(model, norm, channels, norm_kwargs) \
                if norm is not None else torch.nn.Identity()
            self.norms.append(layer)
        self.supports_norm_batch = len(self.norms) > 0 and _takes_batch(self.norms[0])
        self.reset_parameters()

    @property
    def in_channels(self) -> int:
        return self.channel_list[0]

    @property
    def out_channels(self) -> int:
        return self.channel_list[-1]

    @property
    def num_layers(self) -> int:
        return len(self.channel_list) - 1

    def reset_parameters(self) -> None:
        for lin in self.lins:
            lin.reset_parameters()
        for norm in self.norms:
            if hasattr(norm, "reset_parameters"):
                norm.reset_parameters()

    def forward(self, x: Tensor, batch: Optional[Tensor] = None,
                batch_size: Optional[int] = None) -> Tensor:
        for i, (lin, norm) in enumerate(zip(self.lins, self.norms)):
            x = lin(x)
            if self.act is not None and self.act_first:
                x = self.act(x)
            x = norm(x, batch, batch_size) if self.supports_norm_batch else norm(x)
            if self.act is not None and not self.act_first:
                x = self.act(x)
            x = F.dropout(x, p=self.dropout[i], training=self.training)
        x = self.lins[-1](x)
        return F.dropout(x, p=self.dropout[-1], training=self.training)

    def __repr__(self) -> str:
        return f"MLP({str(self.channel_list)[1:-1]})"


class JumpingKnowledge(torch.nn.Module):
    """PyG's `JumpingKnowledge` in plain PyTorch: 'cat' (concatenation),
    'max' (elementwise maximum) or 'lstm' (a bidirectional LSTM's attention
    over the layers: `lstm.*`, `att.*` as PyG names them)."""

    def __init__(self, mode: str, channels: Optional[int] = None,
                 num_layers: Optional[int] = None):
        super().__init__()
        self.mode = mode
        if mode not in ("cat", "max", "lstm"):
            raise ValueError(f"JumpingKnowledge: mode must be 'cat', 'max' or 'lstm', "
                             f"got {mode!r}")
        if mode == "lstm":
            if channels is None or num_layers is None:
                raise ValueError("JumpingKnowledge: 'lstm' needs channels and num_layers")
            size = (num_layers * channels) // 2
            self.lstm = torch.nn.LSTM(channels, size, bidirectional=True,
                                      batch_first=True)
            self.att = torch.nn.Linear(2 * size, 1)
        else:
            self.lstm = None
            self.att = None
        self.channels = channels if mode == "lstm" else None
        self.num_layers = num_layers if mode == "lstm" else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.lstm is not None:
            self.lstm.reset_parameters()
            self.att.reset_parameters()

    def forward(self, xs: List[Tensor]) -> Tensor:
        if self.mode == "cat":
            return torch.cat(xs, dim=-1)
        if self.mode == "max":
            return torch.stack(xs, dim=-1).max(dim=-1)[0]
        x = torch.stack(xs, dim=1)  # [num_nodes, num_layers, channels]
        alpha, _ = self.lstm(x)
        alpha = torch.softmax(self.att(alpha).squeeze(-1), dim=-1)
        return (x * alpha.unsqueeze(-1)).sum(dim=1)

    def __repr__(self) -> str:
        if self.mode == "lstm":
            return (f"{type(self).__name__}({self.mode}, channels={self.channels}, "
                    f"layers={self.num_layers})")
        return f"{type(self).__name__}({self.mode})"


def _positive(model: str, name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{model}: {name} must be a positive int, got {value!r}")
    return value


def _no_trim(model: str, value, sampled_per_hop):
    """`value` (the model's `x` or `edge_index`) when `sampled_per_hop` (its
    `num_sampled_nodes_per_hop` or `num_sampled_edges_per_hop`) is None;
    in a model torch.fx traced (to_hetero) PyG's trim_to_layer is refused
    (NotImplementedError). A function torch.fx does not trace into (`torch.fx.wrap` below): PyG's `to_hetero` traces the
    model with proxies for every argument, then calls this per node type
    (`x`) and per edge type (`edge_index`) with what the caller passed."""
    for v in (sampled_per_hop, value):
        if isinstance(v, torch.fx.Proxy):
            # Traced again where torch.fx.wrap's patch does not reach (a
            # pickled to_hetero model re-traces its generated code when it
            # is loaded): a call of this function in the graph, as wrap
            # makes it, not a refusal of the proxy.
            return v.tracer.create_proxy("call_function", _no_trim,
                                         (model, value, sampled_per_hop), {})
    if sampled_per_hop is not None:
        _common.refuse(model, "num_sampled_nodes_per_hop / num_sampled_edges_per_hop "
                       "(trim_to_layer) in a heterogeneous model (to_hetero)")
    return value


torch.fx.wrap("_no_trim")


class _BasicGNN(_LayerwiseInference, torch.nn.Module):
    r"""PyG's `BasicGNN` over gnnc.nn layers: `num_layers` convolutions
    (`init_conv`), after each but the last (after every one with `jk`) the
    activation (before the norm with `act_first`), the norm (PyG's 'batch_norm'
    or 'layer_norm', or a module, one deep copy per layer) and dropout; with
    `jk`, PyG's jumping knowledge ('cat', 'max', 'lstm'; 'last': the last
    layer's output) and a final `torch.nn.Linear` to `out_channels`.
    Parameters and buffers as PyG's: `convs.{i}.*`, `norms.{i}.*`,
    `jk.*`, `lin.*` (and `act.*` for an activation with parameters).

    `forward(x, edge_index, edge_weight=None, edge_attr=None, batch=None,
    batch_size=None)`: `edge_weight` and `edge_attr` reach the layers where
    PyG's model passes them (GCN's, GAT's), `batch` and `batch_size` the
    norms that take them (layer_norm); elsewhere they have no effect, as in
    PyG's model. `num_sampled_nodes_per_hop` /
    `num_sampled_edges_per_hop` (a loader's `num_sampled_nodes` /
    `num_sampled_edges`): PyG's trim_to_layer, layer `i` without the last
    `i` hops' nodes and edges (and `edge_weight`'s or `edge_attr`'s rows);
    the seeds' outputs are those of the untrimmed batch. Layer-wise
    inference: `_LayerwiseInference`."""

    supports_edge_weight = False
    supports_edge_attr = False

    def __init__(self, in_channels, hidden_channels: int, num_layers: int,
                 out_channels: Optional[int] = None, dropout: float = 0.0,
                 act="relu", act_first: bool = False, act_kwargs=None, norm=None,
                 norm_kwargs=None, jk: Optional[str] = None, **kwargs):
        super().__init__()
        name = type(self).__name__
        _positive(name, "hidden_channels", hidden_channels)
        _positive(name, "num_layers", num_layers)
        if out_channels is not None:
            _positive(name, "out_channels", out_channels)
        if jk not in (None, "last", "cat", "max", "lstm"):
            raise ValueError(f"{name}: jk must be None, 'last', 'cat', 'max' or 'lstm', "
                             f"got {jk!r}")
        self.in_channels = in_channels
        self.hidden_channels = hidden_channels
        self.num_layers = num_layers
        self.dropout = torch.nn.Dropout(p=_common.check_dropout(name, dropout))
        self.act = resolve_activation(act, act_kwargs)
        self.jk_mode = jk
        self.act_first = act_first
        self.norm = norm if isinstance(norm, str) else None
        self.norm_kwargs = norm_kwargs
        self.out_channels = hidden_channels if out_channels is None else out_channels

        # PyG's layer sizes: in -> hidden -> ... -> out (hidden with jk);
        # a (source, target) pair stays a pair of hidden sizes.
        pair = isinstance(in_channels, (tuple, list))
        self.convs = torch.nn.ModuleList()
        for _ in range(num_layers - 1):
            self.convs.append(self.init_conv(in_channels, hidden_channels, **kwargs))
            in_channels = (hidden_channels, hidden_channels) if pair else hidden_channels
        if out_channels is not None and jk is None:
            self._is_conv_to_out = True
            self.convs.append(self.init_conv(in_channels, out_channels, **kwargs))
        else:
            self.convs.append(self.init_conv(in_channels, hidden_channels, **kwargs))

        norm_layer = resolve_norm(name, norm, hidden_channels, norm_kwargs)
        if norm_layer is None:
            norm_layer = torch.nn.Identity()
        self.supports_norm_batch = _takes_batch(norm_layer)
        self.norms = torch.nn.ModuleList(copy.deepcopy(norm_layer)
                                         for _ in range(num_layers - 1))
        self.norms.append(copy.deepcopy(norm_layer) if jk is not None
                          else torch.nn.Identity())
        if jk is not None and jk != "last":
            self.jk = JumpingKnowledge(jk, hidden_channels, num_layers)
        if jk is not None:
            width = num_layers * hidden_channels if jk == "cat" else hidden_channels
            self.lin = torch.nn.Linear(width, self.out_channels)

    def init_conv(self, in_channels, out_channels: int, **kwargs) -> torch.nn.Module:
        raise NotImplementedError

    def reset_parameters(self) -> None:
        for conv in self.convs:
            conv.reset_parameters()
        for norm in self.norms:
            if hasattr(norm, "reset_parameters"):
                norm.reset_parameters()
        if hasattr(self, "jk"):
            self.jk.reset_parameters()
        if hasattr(self, "lin"):
            self.lin.reset_parameters()

    def forward(self, x: Tensor, edge_index: Tensor, edge_weight: Optional[Tensor] = None,
                edge_attr: Optional[Tensor] = None, batch: Optional[Tensor] = None,
                batch_size: Optional[int] = None, num_sampled_nodes_per_hop=None,
                num_sampled_edges_per_hop=None) -> Tensor:
        if isinstance(num_sampled_nodes_per_hop, torch.fx.Proxy) or \
                isinstance(num_sampled_edges_per_hop, torch.fx.Proxy):
            # torch.fx (PyG's to_hetero) traces with a proxy for every
            # argument: trimming is then refused by a call on the values it
            # guards, recorded per node and edge type, which refuses only
            # what the caller passes.
            x = _no_trim(type(self).__name__, x, num_sampled_nodes_per_hop)
            edge_index = _no_trim(type(self).__name__, edge_index,
                                  num_sampled_edges_per_hop)
            trim = False
        else:
            trim = (num_sampled_nodes_per_hop is not None or
                    num_sampled_edges_per_hop is not None)
        if trim:
            self._check_trim(x, edge_index, edge_weight, edge_attr,
                             num_sampled_nodes_per_hop, num_sampled_edges_per_hop)
        xs: List[Tensor] = []
        for i, (conv, norm) in enumerate(zip(self.convs, self.norms)):
            if trim and i > 0:
                # PyG's trim_to_layer: layer i drops the last hop still
                # there (its nodes' rows, its edges): what remains is all
                # the seeds' outputs need.
                drop_nodes = num_sampled_nodes_per_hop[-i]
                drop_edges = num_sampled_edges_per_hop[-i]
                x = x.narrow(0, 0, x.size(0) - drop_nodes)
                edge_index = edge_index.narrow(1, 0, edge_index.size(1) - drop_edges)
                if edge_weight is not None:
                    edge_weight = edge_weight.narrow(0, 0, edge_weight.size(0) - drop_edges)
                elif edge_attr is not None:
                    edge_attr = edge_attr.narrow(0, 0, edge_attr.size(0) - drop_edges)
            # As PyG's model: edge_weight reaches GCN's layers, edge_attr
            # GAT's.
            if self.supports_edge_weight:
                x = conv(x, edge_index, edge_weight=edge_weight)
            elif self.supports_edge_attr:
                x = conv(x, edge_index, edge_attr=edge_attr)
            else:
                x = conv(x, edge_index)
            if i < self.num_layers - 1 or self.jk_mode is not None:
                if self.act is not None and self.act_first:
                    x = self.act(x)
                x = norm(x, batch, batch_size) if self.supports_norm_batch else norm(x)
                if self.act is not None and not self.act_first:
                    x = self.act(x)
                x = self.dropout(x)
                if hasattr(self, "jk"):
                    xs.append(x)
        x = self.jk(xs) if hasattr(self, "jk") else x
        return self.lin(x) if hasattr(self, "lin") else x

    def _check_trim(self, x, edge_index, edge_weight, edge_attr, nodes, edges) -> None:
        """The arguments of PyG's trim_to_layer: both lists (PyG raises for
        a missing one, or ignores a lone `num_sampled_edges_per_hop`), of
        ints, at least one entry per layer after the first, adding up to
        the batch's nodes and edges (a loader's `num_sampled_nodes` /
        `num_sampled_edges`), and not both `edge_weight` and `edge_attr`
        (PyG's NotImplementedError)."""
        name = type(self).__name__
        for arg, value in (("num_sampled_nodes_per_hop", nodes),
                           ("num_sampled_edges_per_hop", edges)):
            if value is None:
                raise ValueError(f"{name}: '{arg}' needs to be given with the other "
                                 f"num_sampled_*_per_hop (PyG's trim_to_layer)")
            if not isinstance(value, (list, tuple)) or any(
                    isinstance(k, bool) or not isinstance(k, int) or k < 0 for k in value):
                raise TypeError(f"{name}: {arg} must be a list of ints >= 0 (one per "
                                f"hop), got {value!r}")
            if len(value) < self.num_layers - 1:
                raise ValueError(f"{name}: {arg} must have an entry per hop, at least "
                                 f"num_layers - 1 = {self.num_layers - 1}, got {value!r}")
        if isinstance(edge_weight, Tensor) and isinstance(edge_attr, Tensor):
            raise NotImplementedError("'trim_to_layer' functionality does not yet support "
                                      "trimming of both 'edge_weight' and 'edge_attr'")
        if not isinstance(x, Tensor) or not isinstance(edge_index, Tensor) or \
                _common.is_sparse(edge_index):
            _common.refuse(name, "num_sampled_*_per_hop (trim_to_layer) with a (source, "
                           "target) pair of features or a sparse adjacency",
                           "pass x [N, F] and edge_index [2, E]")
        if sum(nodes) != x.size(0) or sum(edges) != edge_index.size(1):
            raise ValueError(f"{name}: num_sampled_nodes_per_hop / "
                             f"num_sampled_edges_per_hop add up to {sum(nodes)} nodes "
                             f"and {sum(edges)} edges, but x has {x.size(0)} rows and "
                             f"edge_index {edge_index.size(1)} edges")

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.in_channels}, {self.out_channels}, "
                f"num_layers={self.num_layers})")


class GCN(_BasicGNN):
    r"""PyG's `models.GCN`: `num_layers` gnnc.nn `GCNConv` layers (GCNConv's
    keywords, e.g. `improved`, `cached`, `add_self_loops`, `normalize`,
    `bias`, `flow`, pass to every layer) with PyG's activation, norm,
    dropout and jumping knowledge (`_BasicGNN`); `forward(x, edge_index,
    edge_weight=None)` passes `edge_weight` to every layer, as PyG's model.

    Where the model is a plain stack (no `norm`, no `jk`, `act` ReLU or none
    — 'relu', `torch.nn.ReLU()`, `F.relu`, `torch.relu`, `torch.nn.Identity()`
    or None —, parameters initialised, no `cached`, an `edge_index` tensor,
    no trimming), a call runs the whole model as ONE compiled `gnn`
    function: per layer `h = x W` (a matmul in the function), the GCN
    propagation, `+ b`, ReLU; `d^-1/2` computed once for all layers; the
    dropout masks drawn in PyTorch and passed in, where `dropout` is a
    `torch.nn.Dropout` in training mode (its own mode, as PyG calls it: MC
    dropout keeps it training in an eval model; another module there runs
    the layers one by one). A graph with self-loops
    or an `edge_weight` runs it with the graph's self-loops masked /
    weighted (as `GCNConv`); only a loop-free unweighted graph gets the
    `graph_block` mapping. Every other configuration (another activation, a
    norm, `jk`, lazy `in_channels=-1` before its first call, `cached=True`,
    a sparse adjacency, `num_sampled_*_per_hop`) runs the layers one by
    one, as `_BasicGNN` does, with the same result.

    Parameters: `convs.{i}.lin.weight` [out, in], `convs.{i}.bias` [out]
    (and `norms.*`, `jk.*`, `lin.*` as PyG's), so
    `load_state_dict(pyg_gcn.state_dict())` works; the function takes each
    `lin.weight` as PyTorch stores it and its matmul transposes it: no
    copy. PyG's layer-wise `inference` / `inference_per_layer`:
    `_LayerwiseInference`.
    """

    supports_edge_weight = True
    supports_edge_attr = False

    def init_conv(self, in_channels, out_channels: int, **kwargs) -> torch.nn.Module:
        return GCNConv(in_channels, out_channels, **kwargs)

    @property
    def relu(self) -> Optional[bool]:
        """Whether the one-function path applies ReLU between layers (True),
        nothing (False), or None where `act` is neither (the layers then
        run one by one)."""
        act = self.act
        if act is None or type(act) is torch.nn.Identity:
            return False
        if type(act) is torch.nn.ReLU or any(act is f for f in (F.relu, torch.relu)):
            return True
        return None

    def _one_function(self, x, edge_index, trim: bool) -> bool:
        """Whether this call runs as one gnn function (the class docstring)."""
        return (self.relu is not None and self.jk_mode is None and not trim
                and isinstance(x, Tensor) and isinstance(edge_index, Tensor)
                and not _common.is_sparse(edge_index)
                and all(type(m) is torch.nn.Identity for m in self.norms)
                and type(self.dropout) is torch.nn.Dropout
                and all(not c.cached and not _common.lazy(c.lin) and c.lin.bias is None
                        for c in self.convs)
                and not self._calls_observed()
                and self._layers_alike())

    # The GCNConv options the one function reads (from the first layer):
    # every layer must have the first one's, or the layers run one by one.
    _SHARED = ("add_self_loops", "normalize", "improved", "flow")

    def _layers_alike(self) -> bool:
        """Whether every layer has the first one's options (_SHARED) and a
        bias where it has one: a layer replaced or changed after the model
        was built (`convs[1].add_self_loops = False`) made the one function
        compute the first layer's options for every layer (another result
        than PyG's GCN, silently), or refuse a model whose layers differ in
        bias ('expected 5 tensors, got 4')."""
        first = self.convs[0]
        want = tuple(getattr(first, k) for k in self._SHARED) + (first.bias is None,)
        for conv in self.convs[1:]:
            if tuple(getattr(conv, k) for k in self._SHARED) + (conv.bias is None,) != want:
                return False
        return True

    def _calls_observed(self) -> bool:
        """Whether something may observe or replace a call that PyG's GCN
        makes and the one gnn function skips: a hook (or a `forward` set on
        the instance) on a layer, its `lin`, the activation, a norm or the
        dropout, a layer of another class than GCNConv (a subclass), or a
        global module hook. Then the layers run one by one, so that a
        forward hook on `convs[i]`, the usual way to read a layer's output,
        works as in PyG (a hook on a layer's `lin`: GCNConv refuses it)."""
        if _global_hooks():
            return True
        parts = [self.dropout] + list(self.norms)
        if isinstance(self.act, torch.nn.Module):
            parts.append(self.act)
        for conv in self.convs:
            if type(conv) is not GCNConv:
                return True
            parts += [conv, conv.lin]
        return any(_observed(m) for m in parts)

    @_common.names_graph_errors
    def forward(self, x: Tensor, edge_index: Tensor, edge_weight: Optional[Tensor] = None,
                edge_attr: Optional[Tensor] = None, batch: Optional[Tensor] = None,
                batch_size: Optional[int] = None, num_sampled_nodes_per_hop=None,
                num_sampled_edges_per_hop=None) -> Tensor:
        # As PyG's GCN: edge_attr is not passed to GCNConv; batch and
        # batch_size only reach the norms.
        trim = (num_sampled_nodes_per_hop is not None or
                num_sampled_edges_per_hop is not None)
        plan = _Plan.of(self)
        if plan is not None:
            out = plan.run(self, x, edge_index, edge_weight, trim)
            if out is not None:
                return out
        if not self._one_function(x, edge_index, trim):
            _Plan.drop(self)
            return super().forward(x, edge_index, edge_weight, edge_attr, batch,
                                   batch_size, num_sampled_nodes_per_hop,
                                   num_sampled_edges_per_hop)
        name = type(self).__name__
        first = self.convs[0]
        # (in_channels from the weight: -1 on a lazy layer after its first call)
        cin = first.lin.weight.size(1)
        edge_index, _ = _common.check_inputs(name, x, edge_index, cin,
                                             first.lin.weight.dtype, first.flow)
        n = x.size(0)
        if edge_weight is not None:
            edge_weight = check_edge_weight(name, edge_weight, edge_index, x)
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
        run = gcn_run_dtype(dt, first.normalize)  # (float16: float32 inside, see there)
        ei, weights, w, fold = gcn_graph(first, _common.flip(edge_index, first.flow), n,
                                         run, edge_weight)
        normalize = first.normalize
        tensors = [_common.operand(run, x)]
        for conv in self.convs:
            tensors.append(_common.operand(run, conv.lin.weight))
            if conv.bias is not None:
                tensors.append(_common.operand(run, conv.bias))
        if w is not None:
            tensors.append(_common.operand(run, w))
        # (PyG calls the dropout module: its own mode, not the model's.)
        p = self.dropout.p
        dropout = self.dropout.training and p > 0 and self.num_layers > 1
        if dropout:
            tensors += [_common.attention_dropout_mask((n, self.hidden_channels), p,
                                                       run, x.device)
                        for _ in range(self.num_layers - 1)]
        sizes = (cin,) + tuple(c.out_channels for c in self.convs)
        config = (sizes, _common._DTYPES[run], first.bias is not None, self.relu, weights,
                  normalize, fold, dropout)
        d = run
        if dt in _common._HALVES:
            # PyG's result dtype: each GCNConv's (conv.gcn_dtype) on the
            # previous one's output; converted inside the op.
            d = x.dtype
            for conv in self.convs:
                d = gcn_dtype(conv, dt, d, edge_weight)
        results = _common.returned(run, d)
        if edge_weight is None:
            # (A plan for the next calls: an unweighted edge_index.)
            _GcnModelPlan.keep(self, x, run, config[:4], results, d)
        else:
            _Plan.drop(self)
        out = _common.propagate(self, "gcn_model", config, ei, n, *tensors,
                                results=results)
        return _common.as_dtype(out, d)


# The GCNConv attributes models.GCN's one function reads of each layer (the
# first layer's for every layer: _layers_alike) or requires (`cached` off).
_LAYER_OPTIONS = ("add_self_loops", "normalize", "improved", "flow", "cached",
                  "in_channels", "out_channels")
_layer_options = operator.itemgetter(*_LAYER_OPTIONS)  # (of a layer's __dict__)


class _GcnModelPlan(_Plan):
    """models.GCN's plan (`_Plan`) for its one-function path: the gcn_model
    function of the whole stack, without edge weights, so that a call after
    the first skips `_one_function`'s walk over the model (some 50 us of
    Python on the build machine, more than the rest of the call). Besides
    `_Plan`'s checks: no edge_weight and no trimming; the model's `convs`,
    `norms` and `dropout` the same objects, `convs` and `norms` holding the
    same modules, `act` the same object (a module or a function) and the
    model's `OPTIONS` as then; each layer a GCNConv with its
    `_LAYER_OPTIONS` as then, its `lin` the same object and as then, its
    `bias` the same object (None or a parameter of the dtype, device and
    shape of then); no hook or `forward` of its own on any layer, its
    `lin`, the dropout, a norm or the activation (`watched`). The dropout's
    `p` and mode are read on every call, as the full path reads them, and
    the graph is derived from its contents on every call (gcn_graph). Made
    only for an unweighted edge_index."""

    __slots__ = ("head", "parts", "convs", "norms", "act", "act_module", "layers", "want")
    OPTIONS = ("in_channels", "hidden_channels", "num_layers", "out_channels", "jk_mode",
               "act_first")
    AUTOCAST = True
    FLOWS = False  # (each layer's flow is among its _LAYER_OPTIONS)

    @staticmethod
    def keep(model, x: Tensor, dt: torch.dtype, head: tuple, results: tuple,
             want: torch.dtype) -> None:
        """Keeps the plan of this call on `model` (`head` its config's
        first four entries, `results` and `want` its result's conversion
        and dtype) where it can stand for later ones, else drops any older
        one."""
        if torch.compiler.is_compiling():
            return  # (the model's attributes untouched while traced)
        modules = model._modules
        convs_list, norms_list = modules["convs"], modules["norms"]
        convs = tuple(convs_list._modules.values())
        norms = tuple(norms_list._modules.values())
        act_module = "act" in modules
        act = modules["act"] if act_module else model.__dict__.get("act", _MISSING)
        watched = (modules["dropout"],) + norms + convs + \
            ((act,) if isinstance(act, torch.nn.Module) else ())
        try:
            layers = tuple((_layer_options(c.__dict__), c.lin, c._parameters.get("bias"))
                           for c in convs)
        except KeyError:  # (an option that is no plain attribute: a property)
            _Plan.drop(model)
            return
        p = _GcnModelPlan._make(model, "gcn_model", dt, x,
                                operands=tuple(c.lin for c in convs),
                                params=tuple((str(i), c.bias) for i, c in enumerate(convs)),
                                watched=watched, results=results)
        if p is None:
            return
        p.head, p.want = head, want
        p.parts = (convs_list, norms_list, modules["dropout"])
        p.convs, p.norms, p.act, p.act_module = convs, norms, act, act_module
        p.layers = layers
        p._keep(model)

    def run(self, model, x, edge_index, edge_weight, trim: bool):
        """The model's output, or None where the plan does not stand for
        this call."""
        if edge_weight is not None or trim or not self._stands(model, x, edge_index):
            return None
        modules = model._modules
        convs_list, norms_list, dropout = self.parts
        act = modules.get("act", _MISSING) if self.act_module else \
            model.__dict__.get("act", _MISSING)
        if modules.get("convs") is not convs_list or modules.get("norms") is not norms_list \
                or modules.get("dropout") is not dropout or act is not self.act or \
                tuple(convs_list._modules.values()) != self.convs or \
                tuple(norms_list._modules.values()) != self.norms:
            return None
        tensors = [x.contiguous()]
        dt, device = self.pdtype, self.device
        for conv, (options, lin, bias), (_, _, shape), (_, spec) in zip(
                self.convs, self.layers, self.params, self.operands):
            d = conv.__dict__
            try:
                same = _layer_options(d) == options
            except KeyError:  # (an option deleted, or set as a property)
                return None
            if not same or type(conv) is not GCNConv or \
                    d["_modules"].get("lin") is not lin or \
                    d["_parameters"].get("bias") is not bias:
                return None
            if not self._same_linear(lin, spec, tensors):
                return None
            if bias is not None:
                if bias.dtype != dt or bias.device != device or tuple(bias.shape) != shape:
                    return None
                tensors.append(bias.contiguous())
        first = self.convs[0]
        normalize = self.layers[0][0][1]
        n = x.size(0)
        ei, weights, w, fold = gcn_graph(first, _common.flip(edge_index, self.layers[0][0][3]),
                                         n, self.dtype, None)
        if w is not None:
            tensors.append(_common.cast(self.dtype, w))
        p, layers = dropout.p, self.options[2]
        on = dropout.training and p > 0 and layers > 1
        if on:
            size = (n, self.options[1])
            tensors += [_common.attention_dropout_mask(size, p, self.dtype, x.device)
                        for _ in range(layers - 1)]
        out = self._call(model, self.head + (weights, normalize, fold, on), ei, n, tensors)
        return _common.as_dtype(out, self.want)


class GraphSAGE(_BasicGNN):
    r"""PyG's `models.GraphSAGE`: gnnc.nn `SAGEConv` layers (its keywords,
    e.g. `aggr`, `normalize`, `root_weight`, `project`, `bias`, pass to
    every layer; `in_channels` -1 (lazy) or a (source, target) pair as
    `SAGEConv` takes them). See `_BasicGNN` for the rest."""

    def init_conv(self, in_channels, out_channels: int, **kwargs) -> torch.nn.Module:
        return SAGEConv(in_channels, out_channels, **kwargs)


class GIN(_BasicGNN):
    r"""PyG's `models.GIN`: gnnc.nn `GINConv` layers, each `nn` what PyG
    builds: `MLP([in, out, out], act, act_first, norm (by name only),
    norm_kwargs)` (`_MLP`: `convs.{i}.nn.lins.{0,1}.*`, `convs.{i}.nn
    .norms.0.*`); GINConv's keywords (`eps`, `train_eps`) pass to every
    layer; `in_channels` an int, -1 lazy. See `_BasicGNN` for the rest."""

    def init_conv(self, in_channels, out_channels: int, **kwargs) -> torch.nn.Module:
        if isinstance(in_channels, bool) or not isinstance(in_channels, int):
            raise TypeError(f"{type(self).__name__}: in_channels must be an int "
                            f"(-1: lazy), got {in_channels!r}")
        mlp = _MLP([in_channels, out_channels, out_channels], act=self.act,
                   act_first=self.act_first, norm=self.norm,
                   norm_kwargs=self.norm_kwargs, model=type(self).__name__)
        return GINConv(mlp, **kwargs)


class GAT(_BasicGNN):
    r"""PyG's `models.GAT`: gnnc.nn `GATConv` layers, `GATv2Conv` with
    `v2=True`. As PyG's: every layer has `heads` heads and the model's
    `dropout` as attention dropout; a concatenating layer has `out // heads`
    channels per head (`out` must divide by `heads`: ValueError), and the
    last layer does not concatenate (the mean over heads) when it maps to
    `out_channels` (`out_channels` set, no `jk`). `forward`'s `edge_attr`
    reaches every layer (with `edge_dim`). See `_BasicGNN` for the rest."""

    supports_edge_attr = True

    def init_conv(self, in_channels, out_channels: int, **kwargs) -> torch.nn.Module:
        v2 = kwargs.pop("v2", False)
        heads = kwargs.pop("heads", 1)
        concat = kwargs.pop("concat", True)
        # PyG: no concatenation when the layer maps to out_channels.
        if getattr(self, "_is_conv_to_out", False):
            concat = False
        if concat and out_channels % heads != 0:
            raise ValueError(f"Ensure that the number of output channels of "
                             f"'GATConv' (got '{out_channels}') is divisible "
                             f"by the number of heads (got '{heads}')")
        if concat:
            out_channels = out_channels // heads
        conv = GATConv if not v2 else GATv2Conv
        return conv(in_channels, out_channels, heads=heads, concat=concat,
                    dropout=self.dropout.p, **kwargs)
