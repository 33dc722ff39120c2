"""Locality orders of a graph's nodes (``gnnc.utils.locality_order``,
``gnnc.Graph.reorder``; docs/Python.md, "Reordering a graph").

Computed on the CPU with PyTorch ops, level by level (no Python loop per
node or per component): the ids of an aggregation's gathered rows then lie
close together, so more of them come from the L2 cache.

* ``"rcm"``: reverse Cuthill-McKee on the symmetrised graph (self-loops and
  duplicate edges ignored). Components are taken in the order of their
  starting node, each started at its node of smallest degree (ties: the
  smallest id); within a component, breadth first, each node's unvisited
  neighbours by degree then id, after those of the nodes before it; the
  whole sequence reversed. This is the order the textbook sequential
  algorithm gives with these tie rules.
* ``"degree"``: nodes by degree (in + out, self-loops and duplicates
  counted), highest first, ties by id.
"""

from typing import Tuple

import torch
from torch import Tensor

METHODS = ("rcm", "degree")


def _stable_order(*keys: Tensor) -> Tensor:
    """The permutation sorting by ``keys[0]``, then ``keys[1]``, ...
    (lexicographic, ascending, stable)."""
    order = torch.arange(keys[0].numel())
    for k in reversed(keys):
        order = order[torch.sort(k[order], stable=True).indices]
    return order


def _symmetric_csr(edge_index: Tensor, n: int) -> Tuple[Tensor, Tensor, Tensor]:
    """(row pointers, neighbours, degree) of the undirected simple graph of
    ``edge_index`` (rows sorted by neighbour id)."""
    src, dst = edge_index[0], edge_index[1]
    a = torch.cat([src, dst])
    b = torch.cat([dst, src])
    keep = a != b
    a, b = a[keep], b[keep]
    if a.numel():
        order = _stable_order(a, b)
        a, b = a[order], b[order]
        first = torch.ones(a.numel(), dtype=torch.bool)
        first[1:] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
        a, b = a[first], b[first]
    deg = torch.bincount(a, minlength=n)
    ptr = torch.zeros(n + 1, dtype=torch.int64)
    ptr[1:] = torch.cumsum(deg, 0)
    return ptr, b, deg


def _components(ptr: Tensor, nbr: Tensor, n: int) -> Tensor:
    """A label per node, equal within a connected component (its smallest
    id): minimum-label propagation with pointer jumping."""
    label = torch.arange(n)
    if nbr.numel() == 0:
        return label
    src = torch.repeat_interleave(torch.arange(n), ptr[1:] - ptr[:-1])
    while True:
        new = label.scatter_reduce(0, src, label[nbr], reduce="amin")
        new = torch.minimum(new, new[new])
        while True:
            jumped = new[new]
            if torch.equal(jumped, new):
                break
            new = jumped
        if torch.equal(new, label):
            return label
        label = new


def _cuthill_mckee(ptr: Tensor, nbr: Tensor, deg: Tensor, n: int) -> Tensor:
    """The Cuthill-McKee sequence (before reversal) of every node."""
    comp = _components(ptr, nbr, n)
    ids = torch.arange(n)
    # Each component's start: its node of least degree, then least id; the
    # components in the order of their starts.
    least = torch.full((n,), torch.iinfo(torch.int64).max).scatter_reduce(
        0, comp, deg, reduce="amin")
    cand = torch.where(deg == least[comp], ids, torch.full_like(ids, n))
    start = torch.full((n,), n).scatter_reduce(0, comp, cand, reduce="amin")
    roots = ids[comp == ids]  # one label per component
    starts = start[roots]
    starts = starts[_stable_order(deg[starts], starts)]
    rank = torch.empty(n, dtype=torch.int64)
    rank[comp[starts]] = torch.arange(starts.numel())
    # Breadth first from every start at once, the frontier kept in
    # (component rank, position) order: a node is reached only from its own
    # component, so each component's levels come out as its own search's.
    visited = torch.zeros(n, dtype=torch.bool)
    visited[starts] = True
    frontier = starts
    levels = [frontier]
    while frontier.numel():
        lens = deg[frontier]
        total = int(lens.sum())
        if total == 0:
            break
        parent = torch.repeat_interleave(torch.arange(frontier.numel()), lens)
        offset = torch.arange(total) - torch.repeat_interleave(
            torch.cumsum(lens, 0) - lens, lens)
        nb = nbr[ptr[frontier][parent] + offset]
        fresh = ~visited[nb]
        nb, parent = nb[fresh], parent[fresh]
        if nb.numel() == 0:
            break
        nb = nb[_stable_order(parent, deg[nb], nb)]
        # Each node once, where it first appears.
        uniq, inverse = torch.unique(nb, return_inverse=True)
        first = torch.full((uniq.numel(),), nb.numel()).scatter_reduce(
            0, inverse, torch.arange(nb.numel()), reduce="amin")
        frontier = nb[torch.sort(first).values]
        visited[frontier] = True
        levels.append(frontier)
    seq = torch.cat(levels)
    # Levels were interleaved across components: each component's nodes in
    # the component order, its levels kept in sequence.
    return seq[torch.sort(rank[comp[seq]], stable=True).indices]


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
    if method == "degree":
        deg = torch.bincount(ei.reshape(-1), minlength=n)
        order = _stable_order(-deg, torch.arange(n))
    else:
        ptr, nbr, deg = _symmetric_csr(ei, n)
        order = torch.flip(_cuthill_mckee(ptr, nbr, deg, n), [0]) if n else \
            torch.zeros(0, dtype=torch.int64)
    return order.to(edge_index.device)
