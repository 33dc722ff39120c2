"""`gnnc.nn.to_hetero`: PyG's `torch_geometric.nn.to_hetero` for models built
from gnnc.nn layers."""

import threading

import torch

from .attention import GATConv, GATv2Conv, TransformerConv
from .conv import AGNNConv, GCNConv, GINConv, GINEConv, SAGEConv

# gnnc's message passing layers: what to_hetero runs once per edge type and
# aggregates per destination type.
_LAYERS = (AGNNConv, GATConv, GATv2Conv, GCNConv, GINConv, GINEConv, SAGEConv,
           TransformerConv)
_LOCK = threading.Lock()


def to_hetero(module: torch.nn.Module, metadata, aggr: str = "sum", input_map=None,
              debug: bool = False):
    """`torch_geometric.nn.to_hetero(module, metadata, aggr, input_map,
    debug)` for a model whose message passing layers are gnnc.nn's.

    PyG recognises a message passing layer by `isinstance(layer,
    torch_geometric.nn.MessagePassing)`, which gnnc's layers are not, so its
    own `to_hetero` would copy them per edge type without aggregating their
    results per node type. This runs PyG's transformation with gnnc's layers
    recognised as well (only while it traces the model); the model it
    returns is PyG's: each layer is called as `layer((x_src, x_dst),
    edge_index)` per edge type, so its layers must take bipartite input
    (docs/Python-nn.md: SAGEConv, GINConv, GINEConv, GATConv, GATv2Conv and
    TransformerConv; GCNConv and AGNNConv raise NotImplementedError on the
    first call). Needs torch_geometric."""
    try:
        from torch_geometric.nn import fx
        from torch_geometric.nn import to_hetero as pyg_to_hetero
    except ImportError as e:
        raise ImportError("gnnc.nn.to_hetero needs torch_geometric") from e
    with _LOCK:
        original = fx.is_message_passing_op

        def is_message_passing_op(model, op, target) -> bool:
            if op == "call_module" and isinstance(fx.get_submodule(model, target),
                                                  _LAYERS):
                return True
            return original(model, op, target)

        fx.is_message_passing_op = is_message_passing_op
        try:
            return pyg_to_hetero(module, metadata, aggr=aggr, input_map=input_map,
                                 debug=debug)
        finally:
            fx.is_message_passing_op = original
