"""Drop-in replacements of PyTorch Geometric's convolution layers whose graph
part (scores on edges, softmax, aggregation, degree normalisation) runs as
`gnn` functions compiled by gnnc, forward and backward.

Each layer takes PyG's constructor arguments and `forward(x, edge_index)`,
names its parameters as PyG does (so `layer.load_state_dict(pyg_layer
.state_dict())` works) and computes what PyG computes; an argument gnnc does
not support raises `NotImplementedError` naming it. `GCN` is PyG's
`models.GCN`, as a plain stack (ReLU, no norm, no jk) the whole model
(matmuls included) one compiled function, otherwise layer by layer;
`GraphSAGE`, `GIN` and `GAT` are PyG's models of those names over gnnc.nn's
layers. See docs/Python-nn.md.
"""

from .attention import GATConv, GATv2Conv, TransformerConv
from .conv import AGNNConv, GCNConv, GINConv, GINEConv, SAGEConv
from .hetero import to_hetero
from .hgt import HGTConv
from .models import GAT, GCN, GIN, GraphSAGE
from .rgcn import FastRGCNConv, RGCNConv


def __getattr__(name):
    # HeteroConv subclasses PyG's: made on first use, so that importing
    # gnnc.nn does not need torch_geometric.
    if name == "HeteroConv":
        from .hetero import hetero_conv_class
        return hetero_conv_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AGNNConv",
    "FastRGCNConv",
    "GAT",
    "GATConv",
    "GATv2Conv",
    "GCN",
    "GCNConv",
    "GIN",
    "GINConv",
    "GINEConv",
    "GraphSAGE",
    "HGTConv",
    "RGCNConv",
    "SAGEConv",
    "TransformerConv",
    "to_hetero",
]
