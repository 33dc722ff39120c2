"""Neighbour sampling for mini-batch training: `NeighborLoader`, PyTorch
Geometric's loader of the same name (homogeneous graphs), sampling on the
device where the graph lives.

The graph is turned into CSC once (edges sorted by destination, `indptr`
from a `bincount`); each batch samples the in-neighbours of its frontier
hop by hop on that device, with two gnnc operators per hop (`sample_hop`
and `relabel`: C++ on the CPU, CUDA kernels on the GPU; two host
synchronisations per hop, for the sizes of the sampled edges and of the
new nodes), relabels the nodes to local ids in first-occurrence order and
gathers the node and edge attributes; on CUDA on a stream of its own and,
by default, on a thread of its own one batch ahead of the training loop.
See docs/Python-loader.md.
"""

import atexit
import contextlib
import copy
import math
import operator
import queue
import threading
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Union

import torch
from torch import Tensor

try:  # numpy is optional: node attributes and input_nodes may be arrays
    import numpy as np
    _ARRAYS = (np.ndarray,)
except ImportError:  # pragma: no cover
    np = None
    _ARRAYS = ()

from . import _core

__all__ = ["NeighborLoader"]

_INT64_MAX = torch.iinfo(torch.int64).max

# PyG's loader arguments that are accepted at their default only (anything
# else is refused rather than silently ignored).
_DEFAULT_ONLY = {
    "num_workers": 0, "disjoint": False, "subgraph_type": "directional",
    "directed": True, "temporal_strategy": "uniform", "time_attr": None,
    "weight_attr": None, "is_sorted": False, "filter_per_worker": None,
    "neighbor_sampler": None, "input_time": None, "persistent_workers": False,
    "pin_memory": False, "sampler": None, "batch_sampler": None,
    "collate_fn": None, "worker_init_fn": None, "prefetch_factor": None,
    "transform_sampler_output": None, "timeout": 0, "pin_memory_device": "",
    "multiprocessing_context": None, "in_order": True,
}


# The largest fan-out (the sampler's bound: a frontier's draws with
# replacement, frontier size x fan-out, stay far inside int64).
_MAX_FANOUT = 2**31 - 1


def _name(value) -> str:
    return type(value).__name__


def _is_num_neighbors(value) -> bool:
    """PyG's `torch_geometric.sampler.NumNeighbors` (duck-typed: PyG is
    optional)."""
    return type(value).__name__ == "NumNeighbors" and \
        type(value).__module__.startswith("torch_geometric") and hasattr(value, "values")


def _check_num_neighbors(num_neighbors) -> List[int]:
    """PyG's `num_neighbors` of a homogeneous graph: a list or tuple of ints
    (Python's, numpy's, 0-d integer tensors: anything `operator.index`
    takes, bools excepted), a 1-D integer tensor or numpy array, or a PyG
    `NumNeighbors` holding one of those. A dict, or a NumNeighbors holding
    one, is PyG's per edge type fan-out of a heterogeneous graph: refused."""
    given = num_neighbors
    if _is_num_neighbors(num_neighbors):
        num_neighbors = num_neighbors.values
    if isinstance(num_neighbors, dict):
        held = " (held by a NumNeighbors)" if given is not num_neighbors else ""
        raise NotImplementedError(
            f"NeighborLoader: num_neighbors as a dict{held} (per edge type: "
            f"heterogeneous graphs) is not supported: gnnc's loader samples "
            f"homogeneous graphs; pass a list of ints, one fan-out per hop")
    if isinstance(num_neighbors, (Tensor,) + _ARRAYS):
        if num_neighbors.ndim != 1:
            raise ValueError(f"NeighborLoader: num_neighbors as a {_name(num_neighbors)} "
                             f"must be 1-D (one fan-out per hop), got shape "
                             f"{tuple(num_neighbors.shape)}")
        num_neighbors = list(num_neighbors)
    if not isinstance(num_neighbors, (list, tuple)):
        raise TypeError(f"NeighborLoader: num_neighbors must be a list of ints "
                        f"(one fan-out per hop), got {_name(given)}")
    out = []
    for k in num_neighbors:
        index = None
        if not (isinstance(k, bool) or (np is not None and isinstance(k, np.bool_)) or
                getattr(k, "dtype", None) in (torch.bool, bool)):
            try:
                index = operator.index(k)
            except TypeError:
                pass
        if index is None:
            what = f"{_name(k)} of {k.dtype}" if hasattr(k, "dtype") else _name(k)
            raise TypeError(f"NeighborLoader: num_neighbors must hold ints, got "
                            f"{k!r} ({what})")
        if index < -1 or index > _MAX_FANOUT:
            raise ValueError(f"NeighborLoader: num_neighbors entries must be -1 "
                             f"(all neighbours) or from 0 to {_MAX_FANOUT}, got {index}")
        out.append(index)
    return out


def _check_edge_index(edge_index, num_nodes: int) -> Tensor:
    """data.edge_index checked as gnnc checks one (_core), then its ids."""
    try:
        _core._check_edge_index(edge_index)
    except (TypeError, ValueError) as e:
        raise type(e)(f"NeighborLoader: data.{str(e).removeprefix('gnnc: ')}") from None
    edge_index = edge_index.long()
    _check_ids("NeighborLoader: data.edge_index holds", edge_index, num_nodes)
    return edge_index


def _check_ids(what: str, ids: Tensor, num_nodes: int) -> None:
    """Node ids in [0, num_nodes) (one synchronisation on CUDA)."""
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= num_nodes):
        raise ValueError(f"{what} ids outside [0, {num_nodes}) "
                         f"(num_nodes = {num_nodes})")


def _refuse_hetero(data) -> None:
    """PyG's HeteroData (or a subclass) is refused by name, before its
    attributes are read: it has no `edge_index` of its own, which read as a
    missing graph (a TypeError about NoneType)."""
    if any(c.__name__ == "HeteroData" and c.__module__.startswith("torch_geometric")
           for c in type(data).__mro__):
        raise NotImplementedError(
            "NeighborLoader: data is a HeteroData (a heterogeneous graph), which "
            "gnnc's loader does not sample; it samples a homogeneous Data "
            "(edge_index [2, num_edges]): pass one, e.g. data.to_homogeneous(), "
            "or use torch_geometric.loader.NeighborLoader, whose batches gnnc.nn's "
            "layers take")


def _num_nodes(data, edge_index: Tensor) -> int:
    n = getattr(data, "num_nodes", None)
    if n is None:
        x = getattr(data, "x", None)
        if isinstance(x, Tensor):
            n = x.size(0)
        elif isinstance(edge_index, Tensor) and edge_index.numel():
            n = int(edge_index.max()) + 1
        else:
            n = 0
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"NeighborLoader: data.num_nodes must be an int >= 0, "
                         f"got {n!r}")
    return n


def _data_class():
    """PyG's `Data`, or None without PyG (optional: plain objects only)."""
    try:
        from torch_geometric.data import Data
    except ImportError:
        return None
    return Data


def _attribute_items(data):
    """(name, value) of the attributes of `data` that _node_and_edge_attrs
    reads, in order."""
    Data = _data_class()
    if Data is not None and isinstance(data, Data):
        return [(k, v) for k, v in data.items() if k not in ("edge_index", "num_nodes")]
    return [(k, getattr(data, k, None)) for k in ("x", "y", "edge_attr")]


def _node_and_edge_attrs(data, num_nodes: int, num_edges: int):
    """The tensors a batch gathers: node attributes (by `n_id`), edge
    attributes (by `e_id`), each as (value, the dimension it is gathered
    along), and the rest (copied as they are)."""
    node, edge, other = {}, {}, {}
    Data = _data_class()
    if Data is not None and isinstance(data, Data):
        for key, value in data.items():
            if key in ("edge_index", "num_nodes"):
                # num_nodes: the batch's own (PyG's filter_node_store_).
                continue
            # Tensors, numpy arrays and lists of a row per node (edge) are
            # gathered by n_id (e_id), as PyG's loader gathers them.
            gathered = isinstance(value, (Tensor, list, tuple) + _ARRAYS)
            # Along PyG's __cat_dim__ (the last dimension for keys naming
            # an index, as `pair_index` [2, num_nodes]), as PyG's loader.
            dim = data.__cat_dim__(key, value) if isinstance(value, Tensor) or \
                isinstance(value, _ARRAYS) else 0
            if gathered and data.is_node_attr(key):
                node[key] = (value, dim)
            elif gathered and data.is_edge_attr(key):
                edge[key] = (value, dim)
            else:
                other[key] = value
        return node, edge, other
    for key in ("x", "y"):
        value = getattr(data, key, None)
        if value is not None:
            if not isinstance(value, Tensor) or value.size(0) != num_nodes:
                raise ValueError(f"NeighborLoader: data.{key} must be a tensor with "
                                 f"num_nodes = {num_nodes} rows")
            node[key] = (value, 0)
    value = getattr(data, "edge_attr", None)
    if value is not None:
        if not isinstance(value, Tensor) or value.size(0) != num_edges:
            raise ValueError(f"NeighborLoader: data.edge_attr must be a tensor with "
                             f"E = {num_edges} rows")
        edge["edge_attr"] = (value, 0)
    return node, edge, other


def _make_batch(attrs: Dict[str, Any], num_nodes: int, data=None):
    """The batch of `attrs`: as PyG's loader, a shallow copy of `data` (its
    class kept: a Data subclass's properties, methods and __inc__) holding
    `attrs` alone; a plain Data for other data (a _Batch without PyG)."""
    Data = _data_class()
    if Data is None:
        return _Batch(num_nodes=num_nodes, **attrs)
    if isinstance(data, Data):
        batch = copy.copy(data)
        for key in list(batch.keys()):
            if key not in attrs:
                del batch[key]
        for key, value in attrs.items():
            batch[key] = value
    else:
        batch = Data(**attrs)
    batch.num_nodes = num_nodes
    return batch


def _on(stream):
    """`torch.cuda.stream(stream)`, or nothing for None (the CPU)."""
    return contextlib.nullcontext() if stream is None else torch.cuda.stream(stream)


def _hand_over(side, consumer) -> None:
    """The caller's stream waits for the batch made on the loader's."""
    if consumer is not None:
        consumer.wait_stream(side)


def _check_prefetch(prefetch, device: torch.device) -> int:
    if prefetch is None:
        return 1 if device.type == "cuda" else 0
    if isinstance(prefetch, bool) or not isinstance(prefetch, int):
        raise TypeError(f"NeighborLoader: prefetch must be an int >= 0 or None, got "
                        f"{_name(prefetch)}")
    if prefetch < 0:
        raise ValueError(f"NeighborLoader: prefetch must be >= 0, got {prefetch}")
    return prefetch


# The stop events and threads of iterations sampling ahead, stopped and
# joined when the interpreter exits (an iterator still referenced then was
# never closed): its daemon thread must not be inside a CUDA call while the
# interpreter and the CUDA context are torn down.
_LIVE: Dict[threading.Thread, threading.Event] = {}


@atexit.register
def _stop_live_threads() -> None:
    for thread, stop in list(_LIVE.items()):
        stop.set()
        thread.join(timeout=5.0)


def _ahead(make: Callable[[int], Any], steps: int, depth: int, device: torch.device):
    """make(0), ..., make(steps - 1), made in that order on a thread of their
    own that keeps at most `depth` results waiting (and makes one more);
    an exception of make() is raised here, at the step that raised it. The
    thread is stopped and joined when the iteration ends, however it ends
    (exhausted, `break`, an error, garbage collection)."""
    done = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def hand(item) -> bool:
        while not stop.is_set():
            try:
                done.put(item, timeout=0.05)
                return True
            except queue.Full:
                pass
        return False

    # The caller's autograd mode when the iteration starts, on the thread
    # too (grad mode is per thread: a learnable x gathered ahead under the
    # caller's no_grad came back with a grad_fn, and without prefetch not).
    grad, inference = torch.is_grad_enabled(), torch.is_inference_mode_enabled()

    def work():
        place = (torch.cuda.device(device) if device.type == "cuda"
                 else contextlib.nullcontext())
        try:
            # (inference_mode(False) turns grad mode on: entered first.)
            with place, torch.inference_mode(inference), torch.set_grad_enabled(grad):
                for i in range(steps):
                    if stop.is_set() or not hand((make(i), None)):
                        return
        except BaseException as e:  # raised in the caller's thread instead
            hand((None, e))

    thread = threading.Thread(target=work, name="gnnc.loader", daemon=True)
    _LIVE[thread] = stop
    thread.start()
    try:
        for _ in range(steps):
            item, error = done.get()
            if error is not None:
                raise error
            yield item
    finally:
        stop.set()
        thread.join()
        _LIVE.pop(thread, None)


def _gather(value, ids: Tensor, dim: int = 0):
    """`value`'s entries `ids` along `dim`: a tensor's by index_select, a
    numpy array's by np.take into a CPU tensor (as PyG's loader gathers
    them), a list's (tuple's) as a list (PyG's loader refuses those; one
    read back of `ids` on CUDA for the latter two)."""
    if isinstance(value, Tensor):
        return value.index_select(dim, ids)
    if isinstance(value, _ARRAYS):
        return torch.from_numpy(np.take(value, ids.cpu().numpy(), axis=dim))
    return [value[i] for i in ids.tolist()]


def _pinned(t: Tensor) -> Tensor:
    """`t` in pinned host memory (copied there unless it is already)."""
    return t if t.device.type == "cpu" and t.is_pinned() else t.cpu().pin_memory()


def _take(table: Tensor, ids: Tensor) -> Tensor:
    """table[ids] on the ids' device: index_select where the table lives
    there, else gnnc's gather from pinned host memory (the GPU reads the
    rows over the bus, no host synchronisation)."""
    if table.device == ids.device:
        return table.index_select(0, ids)
    return torch.ops.gnnc.gather_rows(table, ids)


class _Batch:
    """A batch when PyG is not installed: the same attributes as PyG's
    `Data` batch, as plain attributes."""

    def __init__(self, **attrs):
        self.__dict__.update(attrs)

    def __repr__(self) -> str:
        parts = [f"{k}={list(v.shape) if isinstance(v, Tensor) else v!r}"
                 for k, v in self.__dict__.items()]
        return f"Batch({', '.join(parts)})"


class NeighborLoader:
    r"""Mini-batches of sampled neighbourhoods, as PyG's `NeighborLoader`.

    Each batch takes `batch_size` seeds from `input_nodes` and samples, hop
    by hop, at most `num_neighbors[i]` in-neighbours of every node of the
    frontier (edges `src -> dst` with `dst` in the frontier; `-1`: all of
    them), uniformly without replacement (`replace=False`) or `k` draws with
    replacement. A batch is a PyG `Data` holding the sampled subgraph with
    local ids (`edge_index[0]` the sampled neighbour, `edge_index[1]` the
    frontier node), the node attributes gathered by `n_id` (global ids:
    seeds first, in seed order, then each hop's new nodes), the edge
    attributes by `e_id` (ids of the original edges), `batch_size`,
    `input_id` (positions in `input_nodes`; for a mask, as PyG, the node
    ids of its true entries), and `num_sampled_nodes` /
    `num_sampled_edges` per hop (lists, for `trim_to_layer`).

    Args:
        data: a `torch_geometric.data.Data`, or any object with `x`,
            `edge_index`, optional `y`, `edge_attr` and `num_nodes`.
        num_neighbors: fan-out per hop, ints from 0 to 2^31 - 1, or -1 (all
            neighbours): a list or tuple, a 1-D integer tensor or numpy
            array, or PyG's `NumNeighbors` holding one of those.
        input_nodes: the seeds: None (every node), an index tensor (or a
            list or numpy array of ids), or a bool mask of size `num_nodes`.
        batch_size: seeds per batch (> 0).
        shuffle: draw the seeds in a random order each epoch.
        replace: sample with replacement.
        drop_last: drop a last batch smaller than `batch_size`.
        transform: called on each batch; its result is yielded.
        generator: a `torch.Generator` on the sampling device for every
            random draw (shuffle and sampling); default the global RNG.
        device: where sampling runs and batches live; default
            `data.edge_index`'s device. The graph structure and the
            attributes are copied there once.
        feature_memory: "device" (default: `x` on `device`) or "pinned":
            `x` stays in pinned host memory and the GPU reads each batch's
            rows from there through unified addressing (CUDA only; no host
            synchronisation, no host-side copy).
        graph_memory: "device" (default: the graph's CSC on `device`) or
            "pinned": the CSC (row pointers, sources, edge ids; 8 bytes per
            node and 16 per edge) stays in pinned host memory and the
            sampler reads the rows it needs from there (CUDA only). For
            graphs, or graphs and features, that do not fit on the GPU.
        num_replicas, rank: this process's share of the seeds under data
            parallelism (as `DistributedSampler`): every rank draws the same
            permutation (`seed + epoch`, see `set_epoch`), pads it to a
            multiple of `num_replicas` and takes every `num_replicas`-th seed
            from `rank`, so that every rank gets the same number of batches.
        seed: the shuffle's seed under `num_replicas` (same on every rank).
        prefetch: batches sampled ahead of the training loop on a thread of
            the loader's own (at most `prefetch` waiting, one more being
            made), so that the loop never waits for the sampler's host work
            and host synchronisations; 0: each batch is sampled when the
            loop asks for it. Default (None): 1 on CUDA, 0 on the CPU (where
            the sampler would compete with training for the cores). The
            batches are the same whatever the value.

    PyG's other arguments are accepted at their defaults only (`num_workers`
    0, `disjoint` False, no temporal sampling, ...); another value raises
    `NotImplementedError`.
    """

    def __init__(self, data, num_neighbors: Sequence[int],
                 input_nodes: Optional[Tensor] = None, *, batch_size: int = 1,
                 shuffle: bool = False, replace: bool = False, drop_last: bool = False,
                 transform: Optional[Callable] = None,
                 generator: Optional[torch.Generator] = None,
                 device: Union[str, torch.device, None] = None,
                 feature_memory: str = "device", graph_memory: str = "device",
                 num_replicas: Optional[int] = None,
                 rank: Optional[int] = None, seed: int = 0,
                 prefetch: Optional[int] = None, **kwargs):
        _refuse_hetero(data)
        for key, value in kwargs.items():
            if key not in _DEFAULT_ONLY:
                raise TypeError(f"NeighborLoader: unexpected argument '{key}'")
            default = _DEFAULT_ONLY[key]
            if key == "filter_per_worker" and value in (None, True, False):
                # Where the batches are filtered only matters with worker
                # processes, which this loader has none of (num_workers=0).
                continue
            if value is not default and (isinstance(value, Tensor) or value != default):
                shown = (f"a tensor of shape {list(value.shape)}" if isinstance(value, Tensor)
                         else repr(value))
                raise NotImplementedError(f"NeighborLoader: {key}={shown} is not "
                                          f"supported (only {default!r})")
        self.num_neighbors = _check_num_neighbors(num_neighbors)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int):
            raise TypeError(f"NeighborLoader: batch_size must be an int, got "
                            f"{_name(batch_size)}")
        if batch_size <= 0:
            raise ValueError(f"NeighborLoader: batch_size must be > 0, got {batch_size}")
        if transform is not None and not callable(transform):
            raise TypeError("NeighborLoader: transform must be callable")
        self.batch_size = batch_size
        self.shuffle = bool(shuffle)
        self.replace = bool(replace)
        self.drop_last = bool(drop_last)
        self.transform = transform
        self.feature_memory = feature_memory
        self.graph_memory = graph_memory

        edge_index = getattr(data, "edge_index", None)
        if edge_index is None and getattr(data, "adj_t", None) is not None:
            # PyG's ToSparseTensor layout: the graph is adj_t alone.
            raise NotImplementedError(
                "NeighborLoader: a sparse adjacency (data.adj_t) is not supported by "
                "gnnc's loader; pass the graph as data.edge_index [2, num_edges] "
                "(from adj_t: torch_geometric.utils.to_edge_index(adj_t)[0].flip(0), "
                "adj_t's rows being the targets)")
        num_nodes = _num_nodes(data, edge_index)
        edge_index = _check_edge_index(edge_index, num_nodes)
        self.num_nodes = num_nodes
        self.device = torch.device(device) if device is not None else edge_index.device
        if self.device.type == "cuda" and self.device.index is None:
            # The device its tensors land on, named: the loader's thread
            # starts on device 0 whatever the caller's current device is.
            self.device = torch.device("cuda", torch.cuda.current_device())
        for name, value in (("feature_memory", feature_memory),
                            ("graph_memory", graph_memory)):
            if value not in ("device", "pinned"):
                raise ValueError(f"NeighborLoader: {name} must be 'device' or "
                                 f"'pinned', got {value!r}")
            if value == "pinned" and self.device.type != "cuda":
                raise ValueError(f"NeighborLoader: {name}='pinned' needs a CUDA "
                                 f"device (the loader's device is {self.device})")
        if generator is not None:
            if not isinstance(generator, torch.Generator):
                raise TypeError(f"NeighborLoader: generator must be a torch.Generator, "
                                f"got {_name(generator)}")
            if generator.device.type != self.device.type:
                raise ValueError(f"NeighborLoader: generator is on {generator.device} "
                                 f"but the loader samples on {self.device}")
        self.generator = generator
        self.prefetch = _check_prefetch(prefetch, self.device)
        self._init_distributed(num_replicas, rank, seed)

        # The CSC: in-edges of node v at positions indptr[v]:indptr[v + 1],
        # their sources in `_src`, their original edge ids in `_perm`. Built
        # where the edges are when it is to stay in host memory.
        built = edge_index.device if graph_memory == "pinned" else self.device
        edge_index = edge_index.to(built)
        dst = edge_index[1]
        self._perm = torch.sort(dst, stable=True).indices
        self._src = edge_index[0].index_select(0, self._perm)
        self._indptr = torch.zeros(num_nodes + 1, dtype=torch.long, device=built)
        torch.cumsum(torch.bincount(dst, minlength=num_nodes), 0, out=self._indptr[1:])
        num_edges = edge_index.size(1)
        if graph_memory == "pinned":
            self._perm, self._src, self._indptr = (
                _pinned(t) for t in (self._perm, self._src, self._indptr))
        del edge_index, dst

        # The data whose attributes batches gather (PyG's `loader.data`: its
        # layer-wise inference recipes edit it), and what was taken of them.
        self.data = data
        self._num_edges = num_edges
        self._attrs, self._attrs_of = None, None
        self._take_attributes()

        # input_id: positions in input_nodes, or for a mask (as PyG) the
        # node ids, its true positions.
        self._mask_input = False
        self.input_nodes = self._check_input_nodes(input_nodes)
        # Scratch maps of every node, reset after use (never reallocated):
        # global id -> local id in the batch (-1: absent), and global id ->
        # first position among a hop's sampled edges (int64 max: none).
        self._local = torch.full((num_nodes,), -1, dtype=torch.long, device=self.device)
        self._first = torch.full((num_nodes,), _INT64_MAX, dtype=torch.long,
                                 device=self.device)
        self._stream = None  # the CUDA stream batches are sampled on
        # The scratch maps are one batch's at a time: an iteration's thread
        # and a sample() call take turns.
        self._lock = threading.Lock()
        # The graphs gnnc ops asked of batches sampled ahead, as (hops,
        # bipartite): the loader's thread builds them for later batches
        # (_graphs_ahead).
        self._forms = set()

    def __getstate__(self):
        """For copy.deepcopy and pickle (as PyG's loaders allow): the loader
        without its lock and CUDA stream (a copy makes its own); the data,
        the sampling state and the epoch travel."""
        state = dict(self.__dict__)
        state["_lock"] = None
        state["_stream"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    # -- arguments ----------------------------------------------------------

    def _init_distributed(self, num_replicas, rank, seed) -> None:
        if (num_replicas is None) != (rank is None):
            raise ValueError("NeighborLoader: num_replicas and rank go together")
        if num_replicas is not None:
            for name, v in (("num_replicas", num_replicas), ("rank", rank)):
                if isinstance(v, bool) or not isinstance(v, int):
                    raise TypeError(f"NeighborLoader: {name} must be an int, got "
                                    f"{_name(v)}")
            if num_replicas <= 0 or not 0 <= rank < num_replicas:
                raise ValueError(f"NeighborLoader: expected num_replicas > 0 and "
                                 f"0 <= rank < num_replicas, got num_replicas = "
                                 f"{num_replicas}, rank = {rank}")
        self.num_replicas, self.rank, self.seed, self.epoch = num_replicas, rank, seed, 0

    def _check_input_nodes(self, input_nodes) -> Tensor:
        n = self.num_nodes
        if input_nodes is None:
            return torch.arange(n, device=self.device)
        if isinstance(input_nodes, str) or (
                isinstance(input_nodes, (tuple, list)) and len(input_nodes) == 2 and
                (input_nodes[0] is None or isinstance(input_nodes[0], str))):
            raise NotImplementedError("NeighborLoader: typed input_nodes (node_type, "
                                      "ids) of a heterogeneous graph are not supported")
        if isinstance(input_nodes, (list, tuple) + _ARRAYS):
            # A list, tuple or array of ids, or of bools: a mask (PyG reads
            # bools there as the ids 0 and 1; a mask is what they mean).
            try:
                input_nodes = torch.as_tensor(input_nodes)
            except (TypeError, ValueError, RuntimeError) as e:
                raise TypeError(f"NeighborLoader: input_nodes as a "
                                f"{_name(input_nodes)} must hold node ids or "
                                f"bools ({e})") from None
            if input_nodes.numel() == 0:
                input_nodes = input_nodes.long()
        if not isinstance(input_nodes, Tensor):
            raise TypeError(f"NeighborLoader: input_nodes must be None, an index "
                            f"tensor or a bool mask, got {_name(input_nodes)}")
        if input_nodes.dim() != 1:
            raise ValueError(f"NeighborLoader: input_nodes must be 1-D, got shape "
                             f"{list(input_nodes.shape)}")
        if input_nodes.dtype == torch.bool:
            if input_nodes.numel() != n:
                raise ValueError(f"NeighborLoader: input_nodes as a mask must have "
                                 f"num_nodes = {n} entries, got {input_nodes.numel()}")
            self._mask_input = True
            return input_nodes.to(self.device).nonzero().view(-1)
        if input_nodes.dtype.is_floating_point or input_nodes.dtype.is_complex:
            raise TypeError(f"NeighborLoader: input_nodes must be an integer index or "
                            f"a bool mask, got {input_nodes.dtype}")
        input_nodes = input_nodes.to(self.device, torch.long)
        _check_ids("NeighborLoader: input_nodes holds", input_nodes, n)
        return input_nodes

    # -- iteration ----------------------------------------------------------

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose permutation the next iteration draws under
        `num_replicas` (as `DistributedSampler.set_epoch`)."""
        self.epoch = epoch

    def _order(self) -> Tensor:
        """Positions in `input_nodes` of this rank's seeds, in batch order."""
        n = self.input_nodes.numel()
        if self.num_replicas is None:
            if not self.shuffle:
                return torch.arange(n, device=self.device)
            return torch.randperm(n, generator=self.generator, device=self.device)
        g = torch.Generator().manual_seed(self.seed + self.epoch)
        order = torch.randperm(n, generator=g) if self.shuffle else torch.arange(n)
        r = self.num_replicas
        if self.drop_last and n % r:
            order = order[:n - n % r]
        elif n % r and n:
            order = torch.cat([order, order.repeat(math.ceil(r / n))[:r - n % r]])
        return order[self.rank::r].to(self.device)

    def _num_seeds(self) -> int:
        n = self.input_nodes.numel()
        if self.num_replicas is None:
            return n
        r = self.num_replicas
        return n // r if self.drop_last else math.ceil(n / r)

    def __len__(self) -> int:
        n = self._num_seeds()
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def _take_attributes(self) -> None:
        """Takes the data's node, edge and other attributes (moved to
        `device`, `x` to pinned memory with feature_memory='pinned') as
        `_attrs` (node attributes, edge attributes, the rest, the pinned x
        or None: one tuple, which a batch reads once), unless they are the
        objects taken last time. PyG reads `data` for every batch: here at
        every iteration's start (and sample() call), so that an attribute
        assigned, added or deleted since is seen (they were taken once, in
        __init__, and later assignments were silently ignored)."""
        data = self.data
        source = tuple((k, v) for k, v in _attribute_items(data))
        if self._attrs_of is not None and len(source) == len(self._attrs_of) and \
                all(a[0] == b[0] and a[1] is b[1] for a, b in zip(source, self._attrs_of)):
            return
        node, edge, other = _node_and_edge_attrs(data, self.num_nodes, self._num_edges)
        pinned_x = None
        if self.feature_memory == "pinned" and "x" in node:
            pinned_x = _pinned(node.pop("x")[0].contiguous())
        on = lambda v: v.to(self.device) if isinstance(v, Tensor) else v  # noqa: E731
        self._attrs = ({k: (on(v), dim) for k, (v, dim) in node.items()},
                       {k: (on(v), dim) for k, (v, dim) in edge.items()}, other, pinned_x)
        self._attrs_of = source

    def _node_features(self) -> Optional[Tensor]:
        """`x` of every node: the table batches gather their `x` from (on
        `device`, or in pinned host memory); None when the data has no `x`.
        Read by the models' layer-wise inference (gnnc.nn.models)."""
        self._take_attributes()
        node, _, _, pinned_x = self._attrs
        if pinned_x is not None:
            return pinned_x
        x = node.get("x")
        return None if x is None else x[0]

    def __iter__(self) -> Iterator:
        # On CUDA the batches are sampled on a stream of the loader's own, so
        # that its read backs (one per hop and step) wait for its own kernels
        # only, not for the training step still running on the caller's
        # stream; the caller's stream waits for each batch before using it.
        # With `prefetch`, they are also made on a thread of their own, so
        # that the caller's thread does not wait for those read backs at all.
        # The data's attributes are read as they are when the iteration
        # starts (_take_attributes).
        self._take_attributes()
        side, consumer = self._streams()
        with _on(side):
            order = self._order()
            draws = self._iteration_draws()

        def make(i: int):
            with _on(side):
                input_id = order[i * self.batch_size:(i + 1) * self.batch_size]
                seeds = self.input_nodes.index_select(0, input_id)
                batch = self._sample_safely(seeds, seeds if self._mask_input else input_id,
                                            draws, consumer, ahead=self.prefetch > 0)
                made = None
                if side is not None:
                    made = torch.cuda.Event()
                    made.record(side)
            return batch, made

        steps = len(self)
        batches = (_ahead(make, steps, self.prefetch, self.device) if self.prefetch
                   else (make(i) for i in range(steps)))
        try:
            for batch, made in batches:
                if made is not None:
                    consumer.wait_event(made)
                yield batch if self.transform is None else self.transform(batch)
        finally:
            batches.close()  # stops the thread of an iteration left early

    def _iteration_draws(self) -> torch.Generator:
        """The generator of one iteration's sampling draws: seeded by one
        draw from `generator` (or the global RNG) in the caller's thread when
        the iteration starts, so that the batches do not depend on what else
        draws from that RNG while the loader samples ahead (dropout, ...)."""
        seed = torch.randint(1 << 62, (1,), generator=self.generator, device=self.device)
        return torch.Generator(self.device).manual_seed(int(seed))

    def _streams(self):
        """(the loader's CUDA stream, the caller's current one), the former
        made to wait for the work queued on the latter so far; (None, None)
        on the CPU."""
        if self.device.type != "cuda":
            return None, None
        if self._stream is None:
            self._stream = torch.cuda.Stream(self.device)
        consumer = torch.cuda.current_stream(self.device)
        self._stream.wait_stream(consumer)
        return self._stream, consumer

    # -- sampling -----------------------------------------------------------

    def _hop(self, frontier: Tensor, first_local: int, k: int, draws):
        """Samples the in-edges of `frontier` (global ids; local ids
        first_local, first_local + 1, ...): all of them (k = -1), k uniform
        draws with replacement, or k distinct ones by Floyd's algorithm, in
        one gnnc operator (a CUDA kernel per phase on the GPU; its draws are
        keyed by one int64 drawn from `draws` on the device, and the CPU
        draws the same). Returns the edges' sources (global),
        destinations (local) and positions in the CSC. One host sync (the
        edge count)."""
        seed = torch.randint(1 << 62, (1,), generator=draws, device=self.device)
        pos, owner = torch.ops.gnnc.sample_hop(self._indptr, frontier, k, self.replace,
                                               seed)
        return _take(self._src, pos), owner + first_local, pos

    def _relabel(self, src: Tensor, num_local: int):
        """Local ids of `src` (global ids), giving the nodes not seen yet the
        ids num_local, num_local + 1, ... in order of first occurrence (one
        gnnc operator: on the GPU an atomic minimum marks each new node's
        first occurrence, a scan numbers them). Returns (local ids, the new
        nodes' global ids). One host sync (the new node count)."""
        local, new_nodes = torch.ops.gnnc.relabel(self._local, self._first, src, num_local)
        return local, new_nodes

    def sample(self, seeds: Tensor, input_id: Optional[Tensor] = None):
        """The batch of the given seeds (global ids; `input_id` their
        positions in `input_nodes`, default 0, 1, ...). Checks the ids'
        range (a sync), which iterating the loader does not need."""
        seeds = torch.as_tensor(seeds, device=self.device).view(-1)
        if seeds.dtype.is_floating_point or seeds.dtype in (torch.bool, torch.complex64,
                                                              torch.complex128):
            raise TypeError(f"NeighborLoader.sample: seeds must be integer ids, got "
                            f"{seeds.dtype}")
        _check_ids("NeighborLoader.sample: seeds hold", seeds, self.num_nodes)
        self._take_attributes()
        # On the loader's stream as iterating (its scratch maps live there),
        # after the caller's work so far (the seeds may have just been made).
        side, consumer = self._streams()
        with _on(side):
            batch = self._sample_safely(seeds, input_id, self.generator, consumer)
        _hand_over(side, consumer)
        return batch

    def _sample_safely(self, seeds: Tensor, input_id: Optional[Tensor], draws,
                       consumer=None, ahead: bool = False):
        with self._lock:
            try:
                batch = self._sample(seeds, input_id, draws, consumer)
                if ahead:
                    self._graphs_ahead(batch)
                return batch
            except BaseException:
                # The scratch maps may hold this batch's entries: clear them.
                self._local.fill_(-1)
                self._first.fill_(_INT64_MAX)
                raise

    def _graphs_ahead(self, batch) -> None:
        """On the loader's thread: the gnnc graphs the training step will ask
        of this batch, built here (each with the one synchronisation a new
        graph takes) rather than by the step's gnnc ops on the caller's
        thread. Which ones is learned from the ops' requests on earlier
        batches (`_forms`): the graph of the first h hops' edges, over the
        nodes of the first h + 1 hops (a graph, as PyG's trim_to_layer
        makes, or the whole batch for h = L) or from those to the nodes of
        the first h hops (a bipartite layer's). The batch is watched for
        requests of other forms."""
        ei = batch.edge_index
        nodes, edges = batch.num_sampled_nodes, batch.num_sampled_edges
        me = weakref.ref(self)

        def tell(columns: int, num_nodes) -> None:
            loader = me()
            if loader is None:
                return
            for h in range(len(edges) + 1):
                if sum(edges[:h]) != columns:
                    continue
                n = sum(nodes[:h + 1])
                if num_nodes == n or num_nodes == (n, sum(nodes[:h])):
                    loader._forms.add((h, isinstance(num_nodes, tuple)))
                    return

        # Watched before the graphs are built: the watch keeps them.
        _core._watch_loader_batch(ei, tell)
        for h, bipartite in sorted(tuple(self._forms)):
            n = sum(nodes[:h + 1])
            _core._graphs.prebuild(ei, sum(edges[:h]), (n, sum(nodes[:h])) if bipartite else n)

    def _sample(self, seeds: Tensor, input_id: Optional[Tensor], draws, consumer=None):
        dev = self.device
        seeds = seeds.to(dev, torch.long)
        b = seeds.numel()
        if input_id is None:
            input_id = torch.arange(b, device=dev)
        # A seed given twice keeps both positions; other nodes map to the first.
        self._local.scatter_reduce_(0, seeds, torch.arange(b, device=dev), "amin",
                                    include_self=False)
        nodes, rows, cols, eids = [seeds], [], [], []
        num_nodes, num_edges = [b], []
        frontier, first_local, num_local = seeds, 0, b
        for k in self.num_neighbors:
            src, dst, pos = self._hop(frontier, first_local, k, draws)
            row, new_nodes = self._relabel(src, num_local)
            rows.append(row)
            cols.append(dst)
            eids.append(_take(self._perm, pos))
            nodes.append(new_nodes)
            num_edges.append(src.numel())
            num_nodes.append(new_nodes.numel())
            frontier, first_local = new_nodes, num_local
            num_local += new_nodes.numel()
        n_id = torch.cat(nodes)
        self._local.index_fill_(0, n_id, -1)
        e_id = torch.cat(eids) if eids else torch.empty(0, dtype=torch.long, device=dev)
        edge_index = (torch.stack([torch.cat(rows), torch.cat(cols)]) if rows
                      else torch.empty((2, 0), dtype=torch.long, device=dev))
        # Targets are frontier positions, hop after hop: sorted, so gnnc's
        # graph of the batch (and of its per-hop prefixes) needs no CSR sort.
        _core._mark_dst_sorted(edge_index)

        node_attrs, edge_attrs, other_attrs, pinned_x = self._attrs
        attrs = dict(other_attrs)
        for key, (value, dim) in node_attrs.items():
            attrs[key] = _gather(value, n_id, dim)
        for key, (value, dim) in edge_attrs.items():
            attrs[key] = _gather(value, e_id, dim)
        if pinned_x is not None:
            attrs["x"] = _take(pinned_x, n_id)
        # As PyG's loader: an `n_id` / `e_id` of the data's own (ids in a
        # larger graph the data was cut from) is gathered as any attribute
        # and kept; the batch's ids into `data` are set where it has none.
        attrs.setdefault("n_id", n_id)
        attrs.setdefault("e_id", e_id)
        attrs.update(edge_index=edge_index, input_id=input_id,
                     batch_size=b, num_sampled_nodes=num_nodes,
                     num_sampled_edges=num_edges)
        if consumer is not None:
            # Made on the loader's stream, used on the caller's: their memory
            # is not reused before the caller's stream is done with them.
            for v in attrs.values():
                if isinstance(v, Tensor) and v.is_cuda:
                    v.record_stream(consumer)
        return _make_batch(attrs, num_local, self.data)

    def __repr__(self) -> str:
        return (f"NeighborLoader(num_nodes={self.num_nodes}, num_neighbors="
                f"{self.num_neighbors}, batch_size={self.batch_size}, "
                f"device={self.device}, prefetch={self.prefetch})")
