"""PyG's self-loop helpers (``torch_geometric.utils.add_self_loops`` and
``remove_self_loops``) with their results cached per input ``edge_index``,
and ``locality_order``, a renumbering of the nodes for locality (docs/
Python.md, "Reordering a graph").

A layer that adds self-loops in its ``forward`` (PyG's GAT-style layers,
``gnnc.MessagePassing`` subclasses written as PyG's) hands gnnc a new
``edge_index`` on every call, and each new tensor costs a comparison with the
cached graphs (one synchronisation on CUDA, docs/Python.md). These helpers
return the same tensor object while their input holds the same indices (its
contents checked as gnnc checks an ``edge_index``: on CUDA on the device,
without waiting), so gnnc finds the graph it built for it. The results are
gnnc's own: do not write to them through ``.data`` or NumPy (a write through
PyTorch ops is noticed and the result derived anew). Under
``torch.compile`` and for meta tensors they compute without the cache.
"""

from typing import Optional, Tuple, Union

import torch
from torch import Tensor

from . import _core

__all__ = ["add_self_loops", "locality_order", "remove_self_loops"]


def _check(name: str, edge_index, edge_attr) -> None:
    try:  # as gnnc checks an edge_index
        _core._check_edge_index(edge_index)
    except (TypeError, ValueError) as e:
        raise type(e)(f"gnnc.utils.{name}: {str(e).removeprefix('gnnc: ')}") from None
    if edge_attr is not None and (not isinstance(edge_attr, Tensor) or
                                  edge_attr.dim() < 1 or
                                  edge_attr.size(0) != edge_index.size(1)):
        raise ValueError(f"gnnc.utils.{name}: expected edge_attr with "
                         f"{edge_index.size(1)} rows (one per edge), got "
                         f"{getattr(edge_attr, 'shape', type(edge_attr).__name__)}")


def _named(name: str, check, *args):
    """`check(*args)`, its TypeError or ValueError naming gnnc.utils.<name>
    (as _check's)."""
    try:
        return check(*args)
    except (TypeError, ValueError) as e:
        raise type(e)(f"gnnc.utils.{name}: {str(e).removeprefix('gnnc: ')}") from None


def _num_nodes(name: str, num_nodes, pair: bool = False):
    """`num_nodes` checked as gnnc checks one, the error naming
    gnnc.utils.<name>; with `pair`, PyG's bipartite (num_src, num_dst) is
    taken too, returned as a tuple of two."""
    if pair and isinstance(num_nodes, (tuple, list)):
        if len(num_nodes) != 2:
            raise ValueError(f"gnnc.utils.{name}: expected num_nodes as an int or a "
                             f"(num_src, num_dst) pair, got {len(num_nodes)} items")
        return tuple(_named(name, _core._check_num_nodes, n, f"num_nodes[{k}]")
                     for k, n in enumerate(num_nodes))
    return _named(name, _core._check_num_nodes, num_nodes)


_derived = None  # gnnc.nn._common._derived, imported at the first call


def _cached(edge_index: Tensor, what: tuple, build):
    global _derived
    if torch.compiler.is_compiling() or edge_index.is_meta:
        return build()
    if _derived is None:
        from .nn import _common  # the derived-graph cache gnnc.nn's layers use
        _derived = _common._derived
    return _derived(edge_index, what, build)


def remove_self_loops(edge_index: Tensor, edge_attr: Optional[Tensor] = None
                      ) -> Tuple[Tensor, Optional[Tensor]]:
    """``torch_geometric.utils.remove_self_loops``: the edges ``i -> j`` with
    ``i != j`` in their order, and ``edge_attr``'s rows for them."""
    _check("remove_self_loops", edge_index, edge_attr)

    def build():
        keep = (edge_index[0] != edge_index[1]).nonzero().view(-1)
        return _core._make_private(edge_index.index_select(1, keep).contiguous()), keep

    out, keep = _cached(edge_index, ("remove_self_loops",), build)
    return out, (None if edge_attr is None else edge_attr.index_select(0, keep))


def add_self_loops(edge_index: Tensor, edge_attr: Optional[Tensor] = None,
                   fill_value: Union[None, float, Tensor] = None,
                   num_nodes: Union[None, int, Tuple[int, int]] = None
                   ) -> Tuple[Tensor, Optional[Tensor]]:
    """``torch_geometric.utils.add_self_loops``: ``edge_index`` followed by
    ``(n, n)`` for every node ``n < num_nodes`` (default: the largest id + 1;
    a bipartite ``(num_src, num_dst)``: the smaller of the two, as PyG),
    and ``edge_attr`` followed by ``fill_value`` (None: 1) for the loops.
    ``fill_value`` as a string (PyG's reductions of the incoming
    ``edge_attr``) is refused (use ``torch_geometric.utils``)."""
    _check("add_self_loops", edge_index, edge_attr)
    if isinstance(fill_value, str):
        raise NotImplementedError(
            f"gnnc.utils.add_self_loops: fill_value={fill_value!r} (a reduction of the "
            f"incoming edge_attr) is not supported; use torch_geometric.utils."
            f"add_self_loops, or a number or tensor")
    if num_nodes is not None:
        num_nodes = _num_nodes("add_self_loops", num_nodes, pair=True)

    def build():
        # A bipartite (num_src, num_dst): loops on the nodes both sides
        # have, as PyG's.
        n = min(num_nodes) if isinstance(num_nodes, tuple) else num_nodes
        if n is None:
            n = int(edge_index.max()) + 1 if edge_index.numel() else 0
        # int64 loops, as PyG's: an int32 edge_index comes back int64 (cat
        # promotes), as from torch_geometric.utils.add_self_loops.
        loops = torch.arange(n, device=edge_index.device, dtype=torch.int64)
        out = torch.cat([edge_index, loops.unsqueeze(0).expand(2, n)], dim=1)
        return _core._make_private(out), n

    out, n = _cached(edge_index, ("add_self_loops", num_nodes), build)
    if edge_attr is None:
        return out, None
    fill = 1.0 if fill_value is None else fill_value
    if isinstance(fill, Tensor):
        loop_attr = fill.to(edge_attr.dtype).to(edge_attr.device).expand(
            (n,) + tuple(edge_attr.shape[1:]))
    else:
        loop_attr = edge_attr.new_full((n,) + tuple(edge_attr.shape[1:]), float(fill))
    return out, torch.cat([edge_attr, loop_attr], dim=0)


def locality_order(edge_index: Tensor, num_nodes: Optional[int] = None,
                   method: str = "rcm") -> Tensor:
    """A renumbering of the nodes that puts the neighbours of a node close
    to it (docs/Python.md, "Reordering a graph"): ``order[i]`` is the old id
    of new node ``i``. ``method``: ``"rcm"`` (reverse Cuthill-McKee on the
    symmetrised graph) or ``"degree"`` (highest in + out degree first).
    Computed on the CPU, returned on ``edge_index``'s device. To train in the
    new order: ``rank = torch.empty_like(order); rank[order] =
    torch.arange(len(order))``, then ``rank[edge_index]``, ``x[order]``,
    ``y[order]``; a node's result for old id ``j`` is row ``rank[j]``."""
    _check("locality_order", edge_index, None)
    if num_nodes is None:
        num_nodes = int(edge_index.max()) + 1 if edge_index.numel() else 0
    num_nodes = _num_nodes("locality_order", num_nodes)
    from . import _reorder
    return _reorder.locality_order(edge_index, num_nodes, method,
                                   "gnnc.utils.locality_order")
