"""Locality orders of a graph's nodes (``gnnc.utils.locality_order``,
``gnnc.Graph.reorder``; docs/Python.md, "Reordering a graph").

The orders are computed on the CPU by the C++ library
(``gnn::localityOrder``, lib/Graph/HostGraph.cpp), which ``gnn-run
--reorder`` uses too:

* ``"rcm"``: reverse Cuthill-McKee on the symmetrised graph (self-loops and
  duplicate edges ignored). Components are taken in the order of their
  starting node, each started at its node of smallest degree (ties: the
  smallest id); within a component, breadth first, each node's unvisited
  neighbours by degree then id, after those of the nodes before it; the
  whole sequence reversed.
* ``"degree"``: nodes by degree (in + out, self-loops and duplicates
  counted), highest first, ties by id.
"""

import torch
from torch import Tensor

from . import _gnnc

METHODS = ("rcm", "degree")


def locality_order(edge_index: Tensor, num_nodes: int, method: str,
                   who: str = "gnnc") -> Tensor:
    """The node order of ``method`` (``"rcm"`` or ``"degree"``): ``order[i]``
    is the old id of the node that gets id ``i`` (an int64 tensor on
    ``edge_index``'s device). ``who`` starts the error messages."""
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"{who}: method must be one of "
                         f"{', '.join(repr(m) for m in METHODS)}, got {method!r}")
    ei = edge_index.detach().to("cpu", torch.int64)
    n = int(num_nodes)
    if ei.numel() and (int(ei.min()) < 0 or int(ei.max()) >= n):
        raise ValueError(f"{who}: node ids must lie in [0, {n}) (num_nodes = {n}), "
                         f"got ids from {int(ei.min())} to {int(ei.max())}")
    src, dst = ei[0].contiguous(), ei[1].contiguous()
    order = torch.empty(n, dtype=torch.int64)
    _gnnc.locality_order(src.data_ptr(), dst.data_ptr(), src.numel(), n, method,
                         order.data_ptr())
    return order.to(edge_index.device)
