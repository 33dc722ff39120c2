"""gnnc's PyTorch binding: graphs, compiled functions and their custom ops.

Every compiled function runs through PyTorch operators written in C++
(``src/TorchOps.cpp``, PyTorch's stable ABI): ``torch.ops.gnnc.call``
(CPU: the reference evaluator; CUDA: the generated kernels on PyTorch's
current stream, into tensors PyTorch allocates; shapes only from the
Python fake kernels below, for torch.compile and meta tensors; for
``@f_fwd`` inside the autograd.Function _Step) and
``torch.ops.gnnc.call_backward``
(``@f_bwd``, the backward the compiler derived from the same IR; on CUDA
tensors the runtime's training entry, reading the residuals where the
forward left them).

Graphs cross as ``edge_index`` tensors; the CSR/CSC structures built from
them are cached per tensor, so a graph used by several layers and epochs is
built once. Each lookup compares the tensor's contents with the copy the
structures were built from (``_Snapshot.matches``): a changed ``edge_index``
is rebuilt and checked, however it was written. A ``gnnc.Graph`` owns its
indices and skips that comparison.
"""

from __future__ import annotations

import atexit
import errno
import hashlib
import itertools
import json
import operator
import os
import shlex
import stat
import tempfile
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import torch
import torch.autograd.forward_ad as _forward_ad

from . import _gnnc as _C
from . import _jit

CompileError = _C.CompileError

# The IR's element types as the signatures name them (Native.h, describe).
_DTYPES = {"float32": torch.float32, "float64": torch.float64,
           "bfloat16": torch.bfloat16, "float16": torch.float16}
_LOCK = threading.RLock()


class Graph:
    """A graph for gnnc functions.

    ``edge_index`` is a ``[2, E]`` integer tensor, row 0 the sources and row 1
    the targets of the edges (PyG's ``source_to_target`` flow: aggregations
    gather from ``edge_index[0]`` into ``edge_index[1]``). The node count
    defaults to ``edge_index.max() + 1``.

    The graph keeps its own int64 copy of the indices (``graph.edge_index``):
    later writes to the caller's tensor do not change it, so calls with a
    ``Graph`` skip the per-call contents check an ``edge_index`` tensor gets.
    Its structures are built (and the ids checked) on first use.

    ``edge_type`` (an int64 or int32 tensor ``[E]`` on the graph's device,
    relation ids from 0) makes a typed graph, what functions on a
    ``!gnn.graph<typed>`` take (the ``relation`` forms of gather and reduce
    read the ids); copied too, checked when the structures are built.
    """

    def __init__(self, edge_index: torch.Tensor, num_nodes: int,
                 edge_type: Optional[torch.Tensor] = None):
        if torch.compiler.is_compiling():
            # Its private copy is keyed by the tensor's identity, which
            # dynamo cannot trace (its own errors named neither gnnc nor
            # a way out).
            raise RuntimeError(
                "gnnc.Graph cannot be built inside torch.compile'd code: build it "
                "outside and pass it in, or call the function with the edge_index "
                "and num_nodes= (e.g. fn(edge_index, x, num_nodes=n))")
        _check_edge_index(edge_index)
        self.num_nodes = _check_num_nodes(num_nodes)
        if edge_type is not None:
            _check_edge_type(edge_type, edge_index)
        # gnnc's own copy; writing to it is not supported (a write through
        # PyTorch ops is noticed by its version counter and rebuilds the
        # structures, one through .numpy() or .data is not).
        self.edge_index = _private_copy(edge_index, edge_type)
        # Set by reorder(): the original id of each node, and its inverse.
        self.node_order: Optional[torch.Tensor] = None
        self._node_rank: Optional[torch.Tensor] = None

    @staticmethod
    def from_edge_index(edge_index: torch.Tensor,
                        num_nodes: Optional[int] = None) -> "Graph":
        _check_edge_index(edge_index)
        if num_nodes is None:
            if edge_index.is_meta and edge_index.numel():
                raise ValueError("gnnc.Graph.from_edge_index: pass num_nodes= with a "
                                 "meta edge_index (its ids cannot be read)")
            num_nodes = int(edge_index.max()) + 1 if edge_index.numel() else 0
        return Graph(edge_index, num_nodes)

    @property
    def num_edges(self) -> int:
        return self.edge_index.shape[1]

    @property
    def edge_type(self) -> Optional[torch.Tensor]:
        """A typed graph's relation ids (gnnc's int64 copy), else None."""
        return _private_types(self.edge_index)

    @property
    def device(self) -> torch.device:
        return self.edge_index.device

    def statistics(self) -> dict:
        """Nodes, edges and degree statistics (computed on the graph's
        device; built and cached on first use)."""
        entry = _graphs.get(self.edge_index, self.num_nodes)
        return dict(entry.statistics)

    def reorder(self, method: str = "rcm") -> "Graph":
        """The same graph with its nodes renumbered for locality
        (``method``: ``"rcm"``, reverse Cuthill-McKee, or ``"degree"``,
        highest degree first; see :func:`gnnc.utils.locality_order`).

        A compiled function called with the returned graph takes and
        returns node tensors in *this* graph's node order: it permutes its
        node-sized arguments into the new order and its node-sized results
        back (two gathers per call). Edge tensors keep the edge order of
        ``edge_index``. ``node_order[i]`` is the original id of new node
        ``i`` (``None`` on a graph not renumbered); reordering a reordered
        graph composes the two, so calls keep the original order. The order is computed
        once, on the CPU (about 0.1 s per million edges). To run a whole
        model in the new order instead, renumber once with
        :func:`gnnc.utils.locality_order`."""
        from . import _reorder
        order = _reorder.locality_order(self.edge_index, self.num_nodes, method,
                                        "gnnc.Graph.reorder")
        rank = torch.empty_like(order)
        rank[order] = torch.arange(order.numel(), device=order.device)
        g = Graph(rank[self.edge_index], self.num_nodes, self.edge_type)
        if self.node_order is not None:
            # A graph renumbered before: the new order is of its ids, and
            # calls take and return the caller's (the first graph's) order.
            order = self.node_order[order]
            rank = torch.empty_like(order)
            rank[order] = torch.arange(order.numel(), device=order.device)
        g.node_order = order
        g._node_rank = rank
        return g

    def __repr__(self) -> str:
        typed = ", typed" if self.edge_type is not None else ""
        return (f"gnnc.Graph(num_nodes={self.num_nodes}, "
                f"num_edges={self.num_edges}, device={self.device}{typed})")


def _check_edge_type(edge_type, edge_index: torch.Tensor) -> None:
    if not isinstance(edge_type, torch.Tensor):
        raise TypeError(f"gnnc: edge_type must be a torch.Tensor, got "
                        f"{type(edge_type).__name__}")
    if edge_type.dtype not in (torch.int64, torch.int32) or \
            tuple(edge_type.shape) != (edge_index.shape[1],):
        raise ValueError(f"gnnc: edge_type must be an int64 or int32 tensor of "
                         f"shape [{edge_index.shape[1]}] (one relation id per edge), "
                         f"got {edge_type.dtype} of shape {list(edge_type.shape)}")
    if edge_type.device != edge_index.device:
        raise ValueError(f"gnnc: edge_type is on {edge_type.device} but edge_index "
                         f"is on {edge_index.device}")


def _check_edge_index(edge_index) -> None:
    if not isinstance(edge_index, torch.Tensor):
        raise TypeError(
            f"gnnc: edge_index must be a torch.Tensor, got {type(edge_index).__name__}")
    if edge_index.layout != torch.strided:
        raise TypeError(
            f"gnnc: edge_index must be a dense [2, E] integer tensor, got a "
            f"{edge_index.layout} tensor of shape {list(edge_index.shape)} (the "
            f"gnnc.nn layers take a sparse adjacency adj_t in its place; gnnc.Graph "
            f"and compiled functions take edge indices)")
    if edge_index.dim() != 2 or edge_index.shape[0] != 2:
        raise ValueError(
            f"gnnc: edge_index must have shape [2, E], got {list(edge_index.shape)}")
    if edge_index.dtype not in (torch.int64, torch.int32):
        raise TypeError(
            f"gnnc: edge_index must be int64 (or int32), got {edge_index.dtype}")


# --------------------------------------------------------------------------
# Node counts, private index tensors and the per-call contents check.

# Node ids are int64 (edge_index is read as int64), so no graph has more
# nodes than this; the graph's memory is checked when it is built.
_MAX_NODES = 2**63 - 1


def _check_num_nodes(num_nodes, what: str = "num_nodes"):
    """``num_nodes`` as an int in ``[0, 2^63 - 1]`` (``TypeError`` /
    ``ValueError`` naming ``what`` otherwise). A symbolic size (torch.compile
    tracing) is returned as it is: the real call checks the concrete one."""
    if isinstance(num_nodes, torch.SymInt):
        return num_nodes
    if isinstance(num_nodes, bool):
        raise TypeError(f"gnnc: {what} must be an int, got bool")
    try:
        n = operator.index(num_nodes)
    except TypeError:
        raise TypeError(f"gnnc: {what} must be an int, got "
                        f"{type(num_nodes).__name__}") from None
    if not 0 <= n <= _MAX_NODES:
        raise ValueError(f"gnnc: {what} must be in [0, 2^63 - 1] (node ids are "
                         f"int64), got {n}")
    return n


def _rows(num_nodes) -> int:
    """The node rows of a graph's structures: ``num_nodes``, or for a
    bipartite graph's ``(num_src, num_dst)`` the larger count. Sources and
    destinations are numbered 0, 1, ... each; past its own count a side has
    no edges, so the rows there aggregate nothing."""
    return max(num_nodes) if isinstance(num_nodes, tuple) else num_nodes


def _check_ids(index: torch.Tensor, num_nodes, *also: torch.Tensor, hint: str = ""):
    """ValueError unless every id of the non-empty [2, E] int64 `index` is
    in range: below num_nodes, or for a bipartite (num_src, num_dst) each
    row below its own count (`hint` ends the message). One read back (one
    synchronisation on CUDA), which also returns the values of the
    one-element tensors `also` (a list)."""
    lo_s, lo_d, hi_s, hi_d, *values = torch.cat(
        [index.min(1).values, index.max(1).values] + [t.view(1) for t in also]).tolist()
    if isinstance(num_nodes, tuple):
        for side, lo, hi, count in (("source", lo_s, hi_s, num_nodes[0]),
                                    ("destination", lo_d, hi_d, num_nodes[1])):
            if lo < 0 or hi >= count:
                raise ValueError(
                    f"gnnc: edge_index holds {side} id {lo if lo < 0 else hi}, "
                    f"outside [0, {count}) for a bipartite graph of "
                    f"{num_nodes[0]} source and {num_nodes[1]} destination nodes")
        return values
    lo, hi = min(lo_s, lo_d), max(hi_s, hi_d)
    if lo < 0 or hi >= num_nodes:
        raise ValueError(
            f"gnnc: edge_index holds node id {lo if lo < 0 else hi}, outside "
            f"[0, {num_nodes}) for a graph of {num_nodes} nodes{hint}")
    return values


def _check_sizes(num_nodes):
    """``num_nodes`` checked: an int, or a bipartite ``(num_src, num_dst)``."""
    if isinstance(num_nodes, tuple):
        return (_check_num_nodes(num_nodes[0], "the source node count"),
                _check_num_nodes(num_nodes[1], "the destination node count"))
    return _check_num_nodes(num_nodes)


# Tensors only gnnc holds (a gnnc.Graph's copy of its indices, the graphs
# gnnc.nn derives): nothing outside gnnc writes them, so the caches trust
# their version counter and skip the contents check. id -> (weak reference,
# the change flag of the tensor a derived graph came from, or None).
_PRIVATE: Dict[int, tuple] = {}


def _evict_oldest(table: dict, size: int) -> None:
    """Drops ``table``'s oldest entries (insertion order) until it holds
    fewer than ``size``. Other threads (and weakref callbacks) may change
    the table meanwhile: `del table[next(iter(table))]` then took one key
    twice (KeyError) or advanced an iterator over a table another thread
    had just grown ("dictionary changed size during iteration"), failing
    the call of a layer that only wanted a cache slot."""
    while len(table) >= size:
        try:
            key = next(iter(table))
        except (RuntimeError, StopIteration):  # changed under us: look again
            continue
        table.pop(key, None)


def _make_private(t: torch.Tensor, flag=None, edge_types=None) -> torch.Tensor:
    """Marks ``t`` as gnnc's own; ``flag``: the change flag (_Snapshot) of
    the user's tensor ``t`` was derived from, which calls on ``t``'s graph
    honour. ``edge_types``: a typed graph's relation ids (int64 [E], gnnc's
    own copy, checked nonnegative by the graph build), built into ``t``'s
    graph (``!gnn.graph<typed>``)."""
    key = id(t)
    if edge_types is None:
        edge_types = _private_types(t)  # kept when marked again (a flag)

    def drop(ref, key=key):
        rec = _PRIVATE.get(key)
        if rec is not None and rec[0] is ref:
            del _PRIVATE[key]

    _PRIVATE[key] = (weakref.ref(t, drop), flag, edge_types)
    return t


def _is_private(t: torch.Tensor) -> bool:
    rec = _PRIVATE.get(id(t))
    return rec is not None and rec[0]() is t


def _private_flag(t: torch.Tensor):
    rec = _PRIVATE.get(id(t))
    return rec[1] if rec is not None and rec[0]() is t else None


def _private_types(t: torch.Tensor) -> Optional[torch.Tensor]:
    """The edge types a private edge_index carries (_make_private), or None."""
    rec = _PRIVATE.get(id(t))
    return rec[2] if rec is not None and rec[0]() is t else None


# Edge index tensors their maker knows to be sorted by destination (row 1
# non-decreasing: a CSR adjacency's edges, a sampled batch's): their device
# graph skips the CSR sort. A hint only: the build checks it on the device
# and sorts where it is wrong (a tensor written before its first use).
_DST_SORTED: Dict[int, "weakref.ReferenceType"] = {}


def _mark_dst_sorted(t: torch.Tensor) -> torch.Tensor:
    """Marks ``t`` ([2, E]) as sorted by destination (see _DST_SORTED)."""
    key = id(t)

    def drop(ref, key=key):
        if _DST_SORTED.get(key) is ref:
            del _DST_SORTED[key]

    _DST_SORTED[key] = weakref.ref(t, drop)
    return t


# gnnc.loader's batches sampled ahead on its thread: id(edge_index) ->
# _AheadBatch. A gnnc op's first request for a graph of a batch's edge_index
# or of a column prefix of it (trim_to_layer's views) is told to the loader,
# which from then on builds those graphs of its next batches ahead
# (_GraphCache.prebuild).
@dataclass
class _AheadBatch:
    ref: "weakref.ReferenceType"  # the batch's edge_index
    # tell(columns, num_nodes): an op asked for the graph of the first
    # `columns` edges over num_nodes (an int, or (num_src, num_dst)).
    tell: Callable[[int, Any], None]
    # (columns, num_nodes) -> the entry built ahead from those columns. Not
    # the view it was built from: a view holds the batch's edge_index, and
    # this table (global, keyed by the batch) then kept every batch of every
    # epoch alive with its graphs (python/tests/test_loader.py
    # test_batches_built_ahead_are_freed).
    built: Dict[tuple, "_GraphEntry"] = field(default_factory=dict)


_LOADER_BATCHES: Dict[int, _AheadBatch] = {}


def _watch_loader_batch(t: torch.Tensor, tell: Callable[[int, Any], None]) -> None:
    key = id(t)

    def drop(ref, key=key):
        cur = _LOADER_BATCHES.get(key)
        if cur is not None and cur.ref is ref:
            del _LOADER_BATCHES[key]

    _LOADER_BATCHES[key] = _AheadBatch(weakref.ref(t, drop), tell)


def _ahead_batch(t: torch.Tensor) -> Optional[_AheadBatch]:
    """The loader batch `t` is, or is a column prefix of; else None."""
    base = t if t._base is None else t._base
    b = _LOADER_BATCHES.get(id(base))
    if b is None or b.ref() is not base or (t is not base and not _is_prefix(t, base)):
        return None
    return b


def _is_prefix(t: torch.Tensor, base: torch.Tensor) -> bool:
    """Whether ``t`` is ``base[:, :k]`` (a view of the first k columns)."""
    return (t.dim() == 2 and base.dim() == 2 and t.size(0) == base.size(0)
            and t.size(1) <= base.size(1) and t.stride() == base.stride()
            and t.storage_offset() == base.storage_offset())


def _is_dst_sorted(t: torch.Tensor) -> bool:
    """Marked, or a prefix of a marked tensor's columns (`edge_index[:, :k]`,
    PyG's trim_to_layer's views)."""
    ref = _DST_SORTED.get(id(t))
    if ref is not None and ref() is t:
        return True
    base = t._base
    if base is None:
        return False
    ref = _DST_SORTED.get(id(base))
    return ref is not None and ref() is base and _is_prefix(t, base)


def _outside_inference_mode(build: Callable[[], Any]) -> Any:
    """``build()``, whose tensors gnnc keeps across calls (a graph's own
    indices, what gnnc.nn derives from an edge_index), made as normal tensors
    also under ``torch.inference_mode()`` (without gradient tracking, as
    there): an inference tensor has no version counter, so a write to it
    through PyTorch ops went unseen (the cache trusts the counter of its
    own tensors), and a later call with autograd saving it for the backward
    failed with PyTorch's "Inference tensors cannot be saved for backward"
    (a layer evaluated under inference mode first, then trained)."""
    if not torch.is_inference_mode_enabled():
        return build()
    with torch.inference_mode(False), torch.no_grad():
        return build()


def _private_copy(edge_index: torch.Tensor,
                  edge_types: Optional[torch.Tensor] = None) -> torch.Tensor:
    """A contiguous int64 copy of ``edge_index`` that gnnc owns (never an
    alias: ``.to(int64).contiguous()`` returns the input itself when it is
    already contiguous int64); with ``edge_types`` [E], a typed graph's
    (copied too). A normal tensor also under inference mode
    (_outside_inference_mode)."""
    return _outside_inference_mode(lambda: _new_private_copy(edge_index, edge_types))


def _new_private_copy(edge_index: torch.Tensor,
                      edge_types: Optional[torch.Tensor]) -> torch.Tensor:
    copy = torch.empty(edge_index.shape, dtype=torch.int64, device=edge_index.device)
    copy.copy_(edge_index)
    types = None
    if edge_types is not None:
        types = torch.empty(edge_types.shape, dtype=torch.int64,
                            device=edge_types.device)
        types.copy_(edge_types)
    return _make_private(copy, edge_types=types)


def _version_of(t: torch.Tensor) -> Optional[int]:
    """The version counter, or None for an inference tensor (made under
    torch.inference_mode(), which has none)."""
    return None if t.is_inference() else t._version


def _plain(t: torch.Tensor) -> torch.Tensor:
    """The plain tensor holding the indices of a wrapper subclass without
    storage of its own (PyG's ``EdgeIndex``: ``as_tensor()``, its ``_data``),
    else ``t``: its data pointer (0 on the wrapper) and version counter are
    the ones writes reach."""
    if type(t) is torch.Tensor:
        return t
    unwrap = getattr(t, "as_tensor", None)
    inner = unwrap() if callable(unwrap) else None
    return inner if type(inner) is torch.Tensor else t


@dataclass
class _Snapshot:
    """What a cached structure was built from: a copy of the indices (None
    for a private tensor), the tensor's version counter and data pointer,
    and (CUDA) the change flag of the device-side check."""
    copy: Optional[torch.Tensor]
    version: Optional[int]
    data_ptr: int
    flag: Optional[object] = None  # _C.HostFlag
    # A private typed graph's relation ids and their version counter when
    # the structures were built (a write through PyTorch ops rebuilds them).
    types: Optional[torch.Tensor] = None
    types_version: Optional[int] = None

    def __post_init__(self):
        # The copy's metadata, read once: every lookup compares it (matches),
        # and (CUDA) the one run a contiguous tensor at data_ptr is compared
        # as (_byte_spans).
        c = self.copy
        self._meta = None if c is None else (c.shape, c.dtype, c.device)
        self._cpu = c is not None and c.device.type == "cpu"
        # (a CPU copy's address and size, for the memcmp)
        self._bytes = (c.data_ptr(), c.numel() * c.element_size()) if self._cpu else None
        self._span = self._contiguous_span()

    def _contiguous_span(self):
        """_byte_spans of a contiguous tensor at data_ptr (CUDA), or None
        (none, or a tensor subclass without storage)."""
        c = self.copy
        if c is None or self._cpu or (c.numel() and not self.data_ptr):
            return None
        return [(c.data_ptr(), self.data_ptr, c.numel() * c.element_size())]

    @staticmethod
    def of(t: torch.Tensor) -> "_Snapshot":
        # Before anything is cached: a snapshot made under a transform would
        # hold a tensor without storage, and every later lookup would fail.
        _refuse_transforms("this call")
        flag = _private_flag(t)  # None unless t is private (gnnc's own)
        types = _private_types(t)
        private, t = _is_private(t), _plain(t)
        copy = None
        if not private:
            copy = torch.empty(t.shape, dtype=t.dtype, device=t.device)
            copy.copy_(t)
            if t.is_cuda and not t.is_meta:
                _require_cuda(t.device)
                flag = _C.HostFlag()
        return _Snapshot(copy, _version_of(t), t.data_ptr(), flag, types,
                         None if types is None else _version_of(types))

    def stale(self) -> bool:
        """Whether a device-side check has found the tensor changed behind
        its version counter (matches() on CUDA): the calls since returned
        NaN, and the structures must be rebuilt."""
        return self.flag is not None and self.flag.read() != 0

    def matches(self, t: torch.Tensor) -> bool:
        """Whether ``t`` still holds the indices it held when this snapshot was
        taken. PyTorch's version counter misses writes through ``.numpy()``,
        ``.data``, DLPack or shared memory, so the contents are compared:

        * on the CPU a memcmp of the 2 x E indices (``same_bytes``, without
          the GIL; a few milliseconds per million edges, about 1 % of a
          reference call: docs/Reliability.md#python-api);
        * on CUDA, while the version counter and data pointer are unchanged,
          on the device without waiting for it: a kernel on the current
          stream compares the tensor with the copy and sets the snapshot's
          flag (pinned memory) where they differ; the call's results become
          NaN (the ops poison them, TorchOps.cpp) and the next lookup sees
          the flag (stale()) and raises; a column prefix of an edge_index
          (trim_to_layer's view) row by row. A changed version counter or data
          pointer, or another layout, compares with ``torch.equal`` (one
          wait).

        Inside a CUDA graph capture (no synchronisation allowed) and for
        private tensors only the version counter and data pointer are
        compared, and a private typed graph's relation ids' version
        counter."""
        t = _plain(t)
        if self.copy is None or (t.is_cuda and torch.cuda.is_current_stream_capturing()):
            return self.version == _version_of(t) and self.data_ptr == t.data_ptr() and \
                (self.types is None or _version_of(self.types) == self.types_version)
        c = self.copy
        shape, dtype, device = self._meta
        if t.dtype != dtype or t.shape != shape or t.device != device:
            return False
        if self._cpu:
            # (t is on the CPU: its device is the copy's)
            if not t.is_contiguous():
                return torch.equal(c, t)
            p = t.data_ptr()
            if t.numel() and not p:
                return torch.equal(c, t)  # (a wrapper without storage)
            address, size = self._bytes
            return _C.same_bytes(address, p, size)
        if self._span is not None and self.flag is not None and t.is_cuda and \
                self.version == _version_of(t) and self.data_ptr == t.data_ptr() and \
                t.is_contiguous():
            # The common case, a cached graph's tensor as it was: one run,
            # whose span was read when the snapshot was taken.
            self._compare_on_device(t, c, self._span)
            return True
        spans = _byte_spans(c, t) if t.is_cuda and self.flag is not None else None
        if spans is not None:
            version = _version_of(t)
            if self.version == version and self.data_ptr == t.data_ptr():
                self._compare_on_device(t, c, spans)
                return True
            if not torch.equal(c, t):
                return False
            # Written with the same values, or a new tensor holding them:
            # checked on the device again from now on.
            self.version, self.data_ptr = version, t.data_ptr()
            self._span = self._contiguous_span()
            return True
        return torch.equal(c, t)

    def _compare_on_device(self, t: torch.Tensor, c: torch.Tensor, spans) -> None:
        """Queues matches()'s device compare of ``t`` with the copy ``c``
        over ``spans`` on the current stream of t's device: deferred to the
        gnnc op that follows on this thread on a graph of this flag (its
        run compares first, with no launch of its own: TorchOps.cpp
        PendingCheck), else launched on its own by the thread's next op or
        lookup. ``t`` and ``c`` are kept alive until then (_PENDING)."""
        index = t.device.index
        stream = torch._C._cuda_getCurrentRawStream(index)
        if stream != 0:
            # The compare reads both on this stream: not reused before it
            # has run (_keep_for_stream).
            _keep_for_stream((t, c), t.device)
        _C.defer_compare(self.flag.word, spans, stream, index)
        # (after: the previous pending compare, launched by defer_compare
        # if no op took it, read the tensors held until now)
        _PENDING.held = (t, c, self.flag)


# The tensors and flag of this thread's deferred compare (_compare_on_device).
_PENDING = threading.local()


@atexit.register
def _drop_pending() -> None:
    """Drops the main thread's deferred compare's tensors before the module's
    globals go at exit (the graph cache's weakref callbacks, which their
    deaths run, need them)."""
    _PENDING.__dict__.clear()


def _byte_spans(c: torch.Tensor, t: torch.Tensor):
    """(address in c, address in t, bytes) of the contiguous runs that hold
    ``t``'s elements, for a contiguous ``t`` (one run) or a 2-D one whose
    rows are contiguous (a run per row: a column prefix of an edge_index,
    trim_to_layer's view); ``c`` is a contiguous tensor of t's shape. None
    for other layouts."""
    size = t.element_size()
    if t.numel() and not t.data_ptr():  # a tensor subclass without storage
        return None
    if t.is_contiguous():
        return [(c.data_ptr(), t.data_ptr(), t.numel() * size)]
    if t.dim() != 2 or t.stride(1) != 1:
        return None
    row = t.size(1) * size
    spans = [(c.data_ptr() + i * row, t.data_ptr() + i * t.stride(0) * size, row)
             for i in range(t.size(0))]
    # The compare reads 8-byte words: every run must start on one.
    return spans if all(a % 8 == 0 and b % 8 == 0 for a, b, _ in spans) else None


def _keep_for_stream(tensors, device: torch.device) -> None:
    """Work queued on `device`'s current stream, when it is not the default
    one, reads `tensors`: PyTorch's allocator hands their memory out again
    only after that work (record_stream). gnnc's own tensors (self-loop masks, normalisation
    weights, snapshot copies) are dropped on the default stream, which does
    not wait for the others; the caller's get the same care, as a layer
    would give its buffers. The graph's own arrays: rt::Graph::usedOn."""
    if torch.compiler.is_compiling() or torch.cuda.is_current_stream_capturing():
        # Traced, or captured into a CUDA graph (whose memory its pool
        # keeps): nothing to record.
        return
    stream = torch.cuda.current_stream(device)
    for t in tensors:
        if isinstance(t, torch.Tensor) and t.is_cuda and not _is_fake(t):
            t.record_stream(stream)


def _stale_error(t: torch.Tensor) -> RuntimeError:
    return RuntimeError(
        f"gnnc: an edge_index of shape {list(t.shape)} on {t.device} was changed "
        f"after gnnc built its graph, without PyTorch's version counter seeing "
        f"it (a write through .data, DLPack or a raw kernel); the gnnc calls on "
        f"it since then returned NaN. Its graph is rebuilt on the next call; "
        f"write edge_index with PyTorch operations, or pass a new tensor.")


# --------------------------------------------------------------------------
# Graph structures, cached per edge_index tensor.


@dataclass
class _GraphEntry:
    ref: "weakref.ReferenceType"
    snapshot: _Snapshot
    num_nodes: int
    host: Optional[object] = None      # _C.HostGraph
    device: Optional[object] = None    # _C.DeviceGraph
    index: Optional[torch.Tensor] = None  # the int64 copy the device graph read
    statistics: dict = field(default_factory=dict)
    # The ops' handle of the graph (registered while the entry lives).
    handle: int = -1
    # A typed graph's largest relation id, read on the first traced call
    # that checks it (gnnc::graph; a write to the ids makes a new entry):
    # (id,), (None,) for none.
    largest_relation: Optional[tuple] = None


class _GraphCache:
    """Native graphs keyed by the edge_index tensor object and the node
    count, valid while the tensor holds the indices they were built from
    (_Snapshot.matches, checked on every lookup); dropped with the tensor."""

    # Graphs whose tensor died, kept for a new tensor with the same indices
    # (a layer that runs add_self_loops or to_undirected in its forward
    # hands over a new tensor on every call): at most this many.
    RETIRED = 2
    # A new tensor is compared with at most this many graphs of its shape.
    CANDIDATES = 4

    def __init__(self):
        self._entries: Dict[int, _GraphEntry] = {}
        self._retired: List[_GraphEntry] = []

    def get(self, edge_index: torch.Tensor, num_nodes: int) -> _GraphEntry:
        key = id(edge_index)
        with _LOCK:
            e = self._entries.get(key)
            if e is not None and e.ref() is edge_index and e.num_nodes == num_nodes:
                # A derived graph (private) shares its input's flag, which
                # the deriving cache checks: only an owner raises.
                if e.snapshot.copy is not None and e.snapshot.stale():
                    del self._entries[key]
                    raise _stale_error(edge_index)
                if e.snapshot.matches(edge_index):
                    return e
            # A graph built ahead by gnnc.loader (not entered here: the
            # tensor is a view made for this call, gone after the step), or
            # one built from the same indices, else built anew (and
            # checked) from the tensor's present contents.
            e = self._built_ahead(edge_index, num_nodes)
            if e is not None:
                return e
            e = self._same_indices(edge_index, num_nodes)
            if e is None:
                e = self._build(edge_index, num_nodes)
            self._entries[key] = e
            return e

    def prebuild(self, edge_index: torch.Tensor, columns: int, num_nodes) -> None:
        """Builds the graph of edge_index[:, :columns] over num_nodes (a
        loader batch's, see _AheadBatch) before a gnnc op asks for it: on
        gnnc.loader's thread, on its stream, without the cache's lock (the
        ops' lookups on the caller's thread do not wait for the build and
        its synchronisation). An op's later request for the same columns,
        through the batch's tensor or any view of them (a new tensor object
        each step), takes it (_built_ahead)."""
        b = _LOADER_BATCHES.get(id(edge_index))
        if b is None or b.ref() is not edge_index or (columns, num_nodes) in b.built:
            return
        b.built[(columns, num_nodes)] = self._build(edge_index[:, :columns], num_nodes)

    def _built_ahead(self, t: torch.Tensor, num_nodes) -> Optional[_GraphEntry]:
        """The entry prebuild() made from the same columns of the same loader
        batch as ``t``, while the batch's version counter has not moved since
        (the contents are compared as on every call: on CUDA on the device,
        with the entry's change flag, which every view of those columns
        shares); else None, and the loader is told what was asked for."""
        if not isinstance(t, torch.Tensor) or t.is_meta or t.dim() != 2:
            return None
        b = _ahead_batch(t)
        if b is None:
            return None
        e = b.built.get((t.size(1), num_nodes))
        if e is None:
            b.tell(t.size(1), num_nodes)
            return None
        if e.snapshot.stale():
            # A call on these columns found them changed behind the version
            # counter (its results were NaN): raised once, as for any cached
            # graph, then every graph of the batch is built anew from what
            # it holds (a write to the batch may reach the others' columns).
            b.built.clear()
            raise _stale_error(t)
        if _version_of(t) != e.snapshot.version or t.data_ptr() != e.snapshot.data_ptr:
            return None
        # (on CUDA a compare queued on the device, no synchronisation)
        return e if e.snapshot.matches(t) else None

    def _dropper(self, key: int):
        def drop(_ref, key=key, cache=self):
            with _LOCK:
                cur = cache._entries.get(key)
                if cur is not None and cur.ref() is None:
                    del cache._entries[key]
                    cache._retire(cur)
        return drop

    def _retire(self, entry: _GraphEntry) -> None:
        """Keeps the structures of a graph whose tensor died while its
        indices are known (the snapshot's copy), the newest RETIRED."""
        if entry.snapshot.copy is None or entry.snapshot.stale():
            return
        self._retired.append(entry)
        del self._retired[:-self.RETIRED]

    def _same_indices(self, t: torch.Tensor, num_nodes) -> Optional[_GraphEntry]:
        """A new entry for ``t`` sharing the structures of a cached graph
        (live or retired) built from the same indices: one comparison with
        each of at most CANDIDATES graphs of t's shape (on CUDA, one
        synchronisation each) instead of a build. None if there is none.
        Never for private tensors (gnnc's own: derived graphs are cached by
        what they were derived from) or meta tensors."""
        if not isinstance(t, torch.Tensor) or t.is_meta or _is_private(t) or \
                t.dim() != 2 or not isinstance(num_nodes, int):
            return None
        cands = []
        for e in reversed(self._retired + list(self._entries.values())):
            c = e.snapshot.copy
            if c is not None and e.num_nodes == num_nodes and c.shape == t.shape and \
                    c.dtype == t.dtype and c.device == t.device and \
                    (e.device is not None or e.host is not None):
                cands.append(e)
                if len(cands) == self.CANDIDATES:
                    break
        for e in cands:
            if e.snapshot.stale() or not torch.equal(e.snapshot.copy, t):
                continue
            # (by identity: entries are dataclasses, == compares tensors)
            self._retired = [r for r in self._retired if r is not e]
            # Its own snapshot (version, pointer, change flag) over the same
            # copy of the indices; its own handle, so that a call on `t`
            # honours t's change check.
            snap = _Snapshot(e.snapshot.copy, _version_of(_plain(t)), _plain(t).data_ptr(),
                             _C.HostFlag() if t.is_cuda else None)
            entry = _GraphEntry(weakref.ref(t, self._dropper(id(t))), snap, num_nodes,
                                host=e.host, device=e.device, index=e.index,
                                statistics=e.statistics)
            _register(entry, e.index if e.index is not None else snap.copy)
            return entry
        return None

    def _build(self, edge_index: torch.Tensor, num_nodes: int) -> _GraphEntry:
        _check_edge_index(edge_index)
        num_nodes = _check_sizes(num_nodes)
        rows = _rows(num_nodes)
        num_edges = edge_index.shape[1]
        snapshot = _Snapshot.of(edge_index)
        # The indices the structures are built from: the snapshot's copy (or
        # the private tensor itself), never the caller's tensor, so what was
        # checked is what is built.
        index = snapshot.copy if snapshot.copy is not None else edge_index
        if index.dtype != torch.int64 or not index.is_contiguous():
            index = index.to(torch.int64).contiguous()
        # On CUDA the build checks a graph's ids itself (a bipartite graph's
        # sources and targets each against its side), in the one
        # synchronisation it needs anyway (for its statistics).
        if num_edges and not index.is_cuda:
            _check_ids(index, num_nodes)
        sides = num_nodes if isinstance(num_nodes, tuple) else (-1, -1)
        # A typed graph's relation ids (a private edge_index's, gnnc's own
        # contiguous int64 copy): checked nonnegative by the build.
        types = _private_types(edge_index)
        entry = _GraphEntry(weakref.ref(edge_index, self._dropper(id(edge_index))),
                            snapshot, num_nodes)
        if index.is_cuda:
            _require_cuda(index.device)
            with torch.cuda.device(index.device):
                stream = torch.cuda.current_stream(index.device).cuda_stream
                try:
                    entry.device = _C.DeviceGraph(index.data_ptr(),
                                                  index.data_ptr() + 8 * num_edges,
                                                  num_edges, rows, stream,
                                                  _is_dst_sorted(edge_index), *sides)
                    if types is not None:
                        entry.device.set_edge_types(types.data_ptr(), stream)
                    failure = None
                except RuntimeError as e:
                    failure = e
            if failure is not None:
                # An id out of range raises the same ValueError as on the CPU
                # (a second synchronisation, on the error path only).
                if num_edges:
                    _check_ids(index, num_nodes)
                raise failure
            entry.index = index
            entry.statistics = entry.device.statistics()
        else:
            # The host graph copies the arrays.
            entry.host = _C.HostGraph.from_arrays(
                index.data_ptr(), index.data_ptr() + 8 * num_edges, num_edges,
                rows, *sides, typed=types is not None,
                types=0 if types is None else types.data_ptr())
            degree = torch.bincount(index[1], minlength=rows) if num_edges else \
                torch.zeros(rows, dtype=torch.int64)
            entry.statistics = {
                "nodes": rows, "edges": num_edges,
                "mean_degree": num_edges / rows if rows else 0.0,
                "max_in_degree": int(degree.max()) if rows else 0,
                "index_bits": 32 if num_edges < 2**31 - 1 else 64,
            }
        _register(entry, index)
        return entry


_HANDLES = itertools.count(1)
# handle -> its live entry: a training call's autograd node keeps the entry
# (and so the handle) alive until its backward, also where the cache has
# replaced it since (the same edge_index with another node count, or
# rewritten behind PyTorch's version counter).
# (A plain dict of weak references, the entry's finalizer removing its own:
# a WeakValueDictionary's get is Python code, on every training call.)
_ENTRY_OF: "Dict[int, weakref.ref]" = {}


def _forget(handle: int) -> None:
    _ENTRY_OF.pop(handle, None)
    _GRAPH_STATS.pop(handle, None)
    _C.forget_graph(handle)


def _register(entry: _GraphEntry, index: torch.Tensor) -> None:
    """Registers the entry's graph with the ops under a new handle (never
    reused), dropped with the entry."""
    handle = next(_HANDLES)
    st = entry.statistics
    if entry.device is not None:
        bucket = f"{st['schedule_key']}|{st['csr_order']}|{st['index_bits']}"
        flag = entry.snapshot.flag
        _C.register_graph(handle, entry.device, _rows(entry.num_nodes),
                          index.shape[1], index.device.index, bucket,
                          flag.word if flag is not None else 0)
    else:
        _C.register_graph(handle, entry.host, _rows(entry.num_nodes), index.shape[1],
                          -1, "")
    _GRAPH_STATS[handle] = st
    entry.handle = handle
    _ENTRY_OF[handle] = weakref.ref(entry)
    weakref.finalize(entry, _forget, handle)


_graphs = _GraphCache()

_CUDA_DEVICE: Optional[int] = None  # gnnc's CUDA device, once chosen


def _require_cuda(device: torch.device) -> None:
    """Makes ``device`` gnnc's CUDA device, or checks that it is. The runtime
    loads its kernels on one device per process (DistributedDataParallel
    runs a process per GPU): the first CUDA tensor's, unless GNNC_DEVICE
    names one. Chosen inside a device guard, so the caller's current device
    stays as it was."""
    global _CUDA_DEVICE
    index = device.index if device.index is not None else torch.cuda.current_device()
    if index == _CUDA_DEVICE:
        return
    if not _C.cuda_available():
        raise RuntimeError(f"gnnc: CUDA tensors need the CUDA runtime: {_C.cuda_error()}")
    with torch.cuda.device(index):
        error = _C.cuda_select(index)
    if error:
        raise RuntimeError(f"gnnc: {error}")
    _CUDA_DEVICE = index


# --------------------------------------------------------------------------
# Compiled modules.


def _largest_relation(types: torch.Tensor, statistics) -> Optional[int]:
    """A typed graph's largest relation id: read on the CPU (no
    synchronisation there); a CUDA graph's comes from the relation count the
    graph cache took when it built the graph (the synchronisation a new graph
    takes anyway; ``statistics()``: that graph's statistics). None for an
    edgeless graph or a meta tensor."""
    if types.is_meta or not types.numel():
        return None
    if types.is_cuda:
        count = statistics().get("relations")
        return count - 1 if count else None
    return int(types.max())


def _check_relations(function: str, relations: Optional[int], graph: "Graph") -> None:
    """A typed graph's relation ids against the function's count, before
    the call runs, on either device (the reference evaluator would stop at
    the first relation op with a located CompileError, the compiled Program
    refuse the graph with an untyped RuntimeError)."""
    types = graph.edge_type
    if relations is None or types is None:
        return
    # The largest id is kept on the Graph for the edge types' version, so a
    # call on a graph seen before reads nothing (a write through PyTorch ops
    # bumps the version and is checked again).
    version = _version_of(types)
    kept = graph.__dict__.get("_relations_seen")
    if kept is not None and kept[0] is types and version is not None and \
            kept[1] == version:
        top = kept[2]
    else:
        top = _largest_relation(types, graph.statistics)
        graph._relations_seen = (types, version, top)
    _refuse_relation(function, relations, top, types)


def _refuse_relation(function: str, relations: int, top: Optional[int],
                     types: torch.Tensor) -> None:
    """The ValueError of a typed graph whose largest relation id `top` is
    not below the function's count `relations` (eager and traced calls
    alike); nothing where it is."""
    if top is None or top < relations:
        return
    edge = int(torch.nonzero(types == top)[0, 0])
    raise ValueError(f"gnnc: @{function} was generated for {relations} relations but "
                     f"the graph has relation id {top} (edge {edge}; ids must be below "
                     f"the relation count)")


class _Compiled:
    """A parsed module and what was derived from it. ``text`` and ``name``:
    the IR it was parsed from (a built module's printed form) and the name
    its diagnostics are located in; ``path``: the file it was read from, if
    any (the reproducer commands name it)."""

    def __init__(self, key: str, module, text: str = "", name: str = "<string>",
                 path: Optional[str] = None):
        self.key = key
        self.module = module
        self.text, self.name, self.path = text, name, path
        # The user's functions (differentiation adds @f_fwd and @f_bwd).
        self.functions = list(self.module.functions())
        self.signatures: Dict[str, dict] = {}
        self.grad_info: Dict[str, dict] = {}
        self.grad_error: Dict[str, str] = {}
        # A derived forward function -> the function it differentiates.
        self.base_of: Dict[str, str] = {}
        self.cuda = _jit.Variants()
        self.training = _jit.Variants()
        # (function, base) -> the ops' target handle.
        self.targets: Dict[tuple, int] = {}
        # function -> its relation count or None (relations()).
        self._relations: Dict[str, Optional[int]] = {}

    def signature(self, function: str) -> dict:
        sig = self.signatures.get(function)
        if sig is None:
            sig = self.module.signature(function)
            self.signatures[function] = sig
        return sig

    def relations(self, function: str) -> Optional[int]:
        """The relation count of a typed ``function`` (the smallest ``R`` of
        its relation gathers' ``[nodes, R, ...]`` inputs and relation
        reduces' results: ids at or past it are refused), None where it has
        no relation form (the signature's ``relations``)."""
        if function not in self._relations:
            self._relations[function] = self.signature(function)["relations"] or None
        return self._relations[function]

    def prepare(self, function: str) -> None:
        """Signature and derivative of ``function``, ahead of any call (so
        that calls, which torch.compile traces, touch only Python data). A
        function that cannot be differentiated still runs; its gradient
        raises the compiler's diagnostic."""
        with _LOCK:
            self.signature(function)
            if function in self.grad_info or function in self.grad_error:
                return
            try:
                info = self.module.differentiate(function)
                self.signature(info["forward"])
                self.signature(info["backward"])
            except CompileError as e:
                self.grad_error[function] = str(e)
                return
            self.base_of[info["forward"]] = function
            self.grad_info[function] = info

    def target(self, function: str, base: Optional[str] = None) -> int:
        """The ops' handle of ``function`` (``base``: the function whose
        training forward it is), registered on first use."""
        key = (function, base)
        handle = self.targets.get(key)
        if handle is None:
            with _LOCK:
                handle = self.targets.get(key)
                if handle is None:
                    # Derived from the IR, not the registration order: the
                    # ops' graphs that torch.compile caches on disk hold it
                    # as a constant, and a cached graph must name the same
                    # function in every process (with a counter, a process
                    # that registered another function third got the cached
                    # code of a different one: its outputs' layouts). The
                    # layout's version is part of it: code cached by a gnnc
                    # whose ops laid their outputs out otherwise (a training
                    # forward's residuals one tensor each, before they were
                    # packed) names other handles. So do the signatures the
                    # fake kernels read (the function's, and a training
                    # forward's backward and residuals): the same source
                    # compiled by a gnnc that keeps other residuals must not
                    # get code cached for the old ones (torch.compile's
                    # check then fails on the residuals' byte tensor).
                    info = self.grad_info.get(base) if base else None
                    sigs = [self.signature(function), info,
                            self.signature(info["backward"]) if info else None]
                    layout = json.dumps(sigs, sort_keys=True, default=str)
                    digest = hashlib.sha256(
                        f"{self.key}\0{function}\0{base or ''}\0{_OUTPUT_LAYOUT}"
                        f"\0{layout}".encode()).digest()
                    stable = int.from_bytes(digest[:8], "little") >> 2
                    handle = _C.register_target(self.module, function, base or "", stable)
                    _TARGETS[handle] = (self, function, base)
                    self.targets[key] = handle
        return handle

    def cuda_function(self, function: str, stats: dict, wait: bool = False,
                      final: bool = False):
        """The compiled function for graphs of these statistics: graphs whose
        statistics lead to the same default schedules share it. ``wait``:
        this key's own variant, even under GNNC_JIT=async. ``final``: returns
        (variant, whether it is the key's own)."""
        return self._specialised(self.cuda, _C.CudaFunction, function, stats,
                                 wait, final)

    def cuda_training(self, function: str, stats: dict):
        """(the training step of ``function`` (differentiated by prepare())
        for graphs of these statistics, whether it is the key's own)."""
        return self._specialised(self.training, _C.CudaTraining, function, stats,
                                 final=True)

    def _specialised(self, cache: _jit.Variants, kind, function: str,
                     stats: dict, wait: bool = False, final: bool = False):
        # Under GNNC_JIT=async a new schedule key runs on an already
        # compiled variant while its own compiles (_jit.py).
        bucket = (function, stats["schedule_key"], stats["csr_order"],
                  stats["index_bits"])
        fn = cache.ready.get(bucket)
        if fn is None:
            fn = cache.get(bucket, lambda: kind(self.module, function,
                                                stats["stats"],
                                                int(stats["index_bits"])),
                           wait=wait)
        return (fn, cache.ready.get(bucket) is fn) if final else fn


_modules: Dict[str, _Compiled] = {}

# The folder compile errors write IR given as text to, for their reproducer
# command; None: gnnc-reproducers in the temporary folder (the test suite
# points it into pytest's temporary folders: python/tests/conftest.py).
_REPRODUCER_DIR: Optional[str] = None


def _reproducer_dir() -> str:
    if _REPRODUCER_DIR is not None:
        return _REPRODUCER_DIR
    return os.path.join(tempfile.gettempdir(), "gnnc-reproducers")


def _reproducer(compiled: Optional[_Compiled], tool: List[str], options: List[str],
                text: str = "", name: str = "", key: str = "",
                path: Optional[str] = None) -> str:
    """The line that ends a compile error: the command that reproduces it
    (STYLE.md, "Errors"), on the file the IR came from, or on a copy of IR
    given as text (or built with gnnc.ir) written to _reproducer_dir() (as
    torch-mlir's run_pipeline_with_repro_report does), one file per IR."""
    if compiled is not None:
        text, name, key, path = compiled.text, compiled.name, compiled.key, compiled.path
    if path is None:
        folder = _reproducer_dir()
        path = os.path.join(folder, "gnnc-" + key.replace(":", "-") + ".mlir")
        try:
            os.makedirs(folder, exist_ok=True)
            if not os.path.isfile(path):
                with open(path + f".{os.getpid()}.tmp", "w", encoding="utf-8",
                          errors="surrogateescape") as f:
                    f.write(text)
                os.replace(path + f".{os.getpid()}.tmp", path)
        except OSError as e:
            return (f"reproduce with: {' '.join(tool)} FILE.mlir (the IR of {name}; "
                    f"it could not be written to {path}: {e.strerror or e})")
    return "reproduce with: " + " ".join(shlex.quote(a) for a in [*tool, *options, path])


def _graph_spec(sig: dict) -> str:
    """A gnn-run --graph that a function of ``sig`` runs on (its kind of
    graph: bipartite, typed with the function's relation count)."""
    g = sig["args"][0]
    spec = ("bipartite:src=16,dst=16,edges=64" if g.get("bipartite") else
            "powerlaw:nodes=16,edges=64")
    if g.get("typed"):
        spec += f",relations={max(1, sig.get('relations') or 1)}"
    return spec
# id() of a gnnc.ir-built module -> its key in _modules (which keeps it alive).
_BUILT: Dict[int, str] = {}


def _module(key: str) -> _Compiled:
    m = _modules.get(key)
    if m is None:
        raise RuntimeError(f"gnnc: no compiled module {key!r} in this process")
    return m


def _side_rows(num_nodes, num_edges) -> Dict[str, Any]:
    """The leading size of each tensor kind on a graph of ``num_nodes``
    nodes (an int, or a bipartite graph's ``(num_src, num_dst)``)."""
    src, dst = num_nodes if isinstance(num_nodes, tuple) else (num_nodes, num_nodes)
    return {"node": _rows(num_nodes), "edge": num_edges, "src": src, "dst": dst}


# How an error names a kind's leading size.
_ROWS_FIRST = {"node": " (nodes first)", "edge": " (edges first)",
               "src": " (source nodes first)", "dst": " (destination nodes first)"}


def _op_sizes(num_nodes) -> Tuple[Any, Any]:
    """The ops' (num_nodes, num_dst): (n, -1) on a graph of one node set, a
    bipartite graph's (num_src, num_dst)."""
    return num_nodes if isinstance(num_nodes, tuple) else (num_nodes, -1)


def _op_num_nodes(num_nodes, num_dst):
    """_op_sizes' inverse."""
    return num_nodes if isinstance(num_dst, int) and num_dst < 0 else (num_nodes, num_dst)


def _result_shapes(sig: dict, num_nodes, num_edges) -> List[Tuple[list, torch.dtype]]:
    rows = _side_rows(num_nodes, num_edges)
    out = []
    for r in sig["results"]:
        shape = list(r["shape"])
        if r["kind"] in rows:
            shape[0] = rows[r["kind"]]
        out.append((shape, _DTYPES[r["dtype"]]))
    return out


def _check_inputs(sig: dict, function: str, edge_index: torch.Tensor,
                  num_nodes: int, inputs: Sequence[torch.Tensor]) -> None:
    args = sig["args"][1:]
    if len(inputs) != len(args):
        raise TypeError(f"gnnc: @{function} takes a graph and {len(args)} tensors, "
                        f"got {len(inputs)} tensors")
    rows = _side_rows(num_nodes, edge_index.shape[1])
    for i, (t, a) in enumerate(zip(inputs, args)):
        what = f"gnnc: @{function} argument #{i + 1}"
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{what} must be a torch.Tensor, got {type(t).__name__}")
        if t.layout != torch.strided:
            raise TypeError(f"{what} must be a dense (strided) tensor, got a {t.layout} "
                            f"tensor (call .to_dense())")
        want = _DTYPES.get(a["dtype"])
        if t.dtype != want:
            raise TypeError(f"{what} must be {want}, got {t.dtype}")
        shape = list(a["shape"])
        if a["kind"] in rows:
            shape[0] = rows[a["kind"]]
        if list(t.shape) != shape:
            raise ValueError(f"{what} must have shape {shape}"
                             f"{_ROWS_FIRST.get(a['kind'], '')}, got {list(t.shape)}")
        if t.device != edge_index.device:
            raise ValueError(f"{what} is on {t.device}, the graph on {edge_index.device}")
        if not t.is_contiguous():
            raise ValueError(f"{what} must be contiguous (call .contiguous())")


# --------------------------------------------------------------------------
# The ops.
#
# torch.ops.gnnc.call and torch.ops.gnnc.call_backward are C++ operators
# (src/TorchOps.cpp, PyTorch's stable ABI) with CPU and CUDA kernels (their
# fake kernels are below): a call checks its tensors, allocates the outputs
# and the workspace from PyTorch and runs the function on the reference
# evaluator or as compiled kernels on PyTorch's current stream, without
# Python. A function is named by its *target* handle (registered once), its
# graph by the integer handle of a graph built by _GraphCache. Only a
# (function, schedule key) pair the op has not seen calls back into Python
# (_resolve: the JIT policy of _jit.py).

_TARGETS: Dict[int, Tuple["_Compiled", str, Optional[str]]] = {}
_GRAPH_STATS: Dict[int, dict] = {}


def _resolve(target: int, graph: int):
    """The op's question on a new (function, schedule key): the compiled
    variant to run and whether it is the key's own (kept by the op) or a
    fallback while that one compiles (asked again next time)."""
    compiled, function, base = _TARGETS[target]
    stats = _GRAPH_STATS[graph]
    if base is not None:
        return compiled.cuda_training(base, stats)
    return compiled.cuda_function(function, stats, final=True)


_C.set_resolver(_resolve)

_ERRORS = {"[TypeError] ": TypeError, "[ValueError] ": ValueError,
           "[CompileError] ": CompileError, "[RuntimeError] ": RuntimeError}


def _translated(e: RuntimeError) -> BaseException:
    """The op's tagged error as the exception it stands for."""
    text = str(e)
    for tag, kind in _ERRORS.items():
        at = text.find(tag)
        if at >= 0:
            message = text[at + len(tag):]
            # PyTorch may append its own context after the message.
            cut = message.find("\nException raised from")
            return kind(message if cut < 0 else message[:cut])
    return e


def _handle(edge_index: torch.Tensor, num_nodes, relations: int = -1, function: str = ""):
    """The handle of ``edge_index``'s graph: from the graph cache, or (traced
    by torch.compile) from the gnnc::graph op, which looks it up when the
    compiled code runs (and checks a typed graph's ids against
    ``relations``, the count of ``@function``, where that is >= 0). Meta
    tensors (shapes only) have no graph: 0, which the ops' fake kernels do
    not read."""
    if edge_index.is_meta:
        return 0
    concrete = isinstance(num_nodes, int) or (
        isinstance(num_nodes, tuple) and all(isinstance(s, int) for s in num_nodes))
    if torch.compiler.is_compiling() or not concrete or \
            (type(edge_index) is not torch.Tensor and _is_fake(edge_index)):
        sizes = num_nodes if isinstance(num_nodes, tuple) else (num_nodes,)
        if relations >= 0:
            sizes = (sizes + (-1,))[:2]
            return torch.ops.gnnc.graph(edge_index, *sizes, relations, function)
        return torch.ops.gnnc.graph(edge_index, *sizes)
    return _graphs.get(edge_index, num_nodes).handle


try:
    from torch._subclasses.fake_tensor import is_fake as _is_fake
except ImportError:  # pragma: no cover - a PyTorch without fake tensors
    def _is_fake(t: torch.Tensor) -> bool:
        return False


# Never recorded in a CUDA graph: the lookup (and its change check) must run
# on every step, also while torch.compile's mode="reduce-overhead" replays
# the rest (its graph partitions run these ops eagerly between them).
_NOT_IN_CUDA_GRAPHS = ((torch.Tag.cudagraph_unsafe,)
                       if hasattr(torch.Tag, "cudagraph_unsafe") else ())


@torch.library.custom_op("gnnc::graph", mutates_args=(),
                         tags=_NOT_IN_CUDA_GRAPHS)
def _graph_op(edge_index: torch.Tensor, num_nodes: int, num_dst: int = -1,
              relations: int = -1, function: str = "") -> int:
    """The handle of ``edge_index``'s graph (built and checked by the graph
    cache), for calls traced by torch.compile. An integer, not a tensor: the
    CUDA-graph trees of mode="reduce-overhead" record one CUDA graph per
    value of their integer inputs, so a step on another graph never replays
    kernels captured on this one. ``relations`` >= 0: a typed graph's ids
    are checked against that count of ``@function`` (the ValueError of an
    eager call, which reads them before tracing cannot)."""
    # num_dst >= 0: a bipartite graph of num_nodes sources and num_dst
    # destinations.
    key = num_nodes if num_dst < 0 else (num_nodes, num_dst)
    entry = _graphs.get(edge_index, key)
    types = _private_types(edge_index) if relations >= 0 else None
    if types is not None:
        if entry.largest_relation is None:
            entry.largest_relation = (_largest_relation(types, lambda: entry.statistics),)
        _refuse_relation(function, relations, entry.largest_relation[0], types)
    return entry.handle


@_graph_op.register_fake
def _graph_op_fake(edge_index, num_nodes, num_dst=-1, relations=-1, function=""):
    # An unbacked integer: its value is only known when the op runs. Not
    # ctx.new_dynamic_size(), which is refused (a graph break) unless
    # torch._dynamo.config.capture_dynamic_output_shape_ops is set: the
    # handle is no tensor's size.
    ctx = torch.library.get_ctx()
    shape_env = getattr(ctx, "_shape_env", None)
    if shape_env is None:
        return ctx.new_dynamic_size()
    return shape_env.create_unbacked_symint()


# The ops' fake kernels (shapes only, for torch.compile's tracing and meta
# tensors). Python's, not C++: the graph handle is symbolic while tracing,
# and the stable ABI passes a SymInt to C++ only as a concrete integer.


# The ops' output layout (TorchOps.cpp): 2 = a training forward's residuals
# in one byte tensor (_residual_bytes).
_OUTPUT_LAYOUT = 2


@torch.library.register_fake("gnnc::call")
def _call_fake(target, edge_index, num_nodes, num_dst, graph, inputs):
    compiled, function, base = _TARGETS[target]
    sig = compiled.signature(function)
    if len(inputs) != len(sig["args"]) - 1:
        raise TypeError(f"gnnc: @{function} takes {len(sig['args']) - 1} "
                        f"tensors, got {len(inputs)}")
    shapes = _result_shapes(sig, _op_num_nodes(num_nodes, num_dst), edge_index.shape[1])
    if base is None:
        return [edge_index.new_empty(shape, dtype=dtype) for shape, dtype in shapes]
    own = len(compiled.signature(base)["results"])
    return [edge_index.new_empty(shape, dtype=dtype) for shape, dtype in shapes[:own]] + \
        [edge_index.new_empty(_residual_bytes(shapes[own:]), dtype=torch.uint8)]


def _residual_bytes(shapes) -> int:
    """The size of the byte tensor holding a training forward's residuals
    (`shapes`: their (shape, dtype) pairs), each from a 256-byte boundary:
    TorchOps.cpp's residualLayout, for the fake kernel (symbolic sizes
    too)."""
    total = 0
    for shape, dtype in shapes:
        size = dtype.itemsize
        for d in shape:
            size = size * d
        total = total + (size + 255) // 256 * 256
    return total


@torch.library.register_fake("gnnc::call_backward")
def _call_backward_fake(target, edge_index, num_nodes, num_dst, graph, inputs,
                        outputs, output_grads):
    compiled, function, base = _TARGETS[target]
    if base is None:
        raise ValueError(f"gnnc: @{function} is not the forward of a training "
                         f"step (no backward)")
    sig = compiled.signature(compiled.grad_info[base]["backward"])
    return [edge_index.new_empty(shape, dtype=dtype) for shape, dtype in
            _result_shapes(sig, _op_num_nodes(num_nodes, num_dst), edge_index.shape[1])]


class _Step(torch.autograd.Function):
    """A training target's forward (``@f_fwd``, one gnnc::call) with the
    backward the compiler derived (``@f_bwd``, one gnnc::call_backward).
    PyTorch's stable ABI has no C++ autograd; a plain autograd.Function is
    the lightest Python around the two calls (torch.compile traces it)."""

    @staticmethod
    def forward(ctx, target, results, layout, edge_index, num_nodes, graph, *inputs):
        outs = torch.ops.gnnc.call(target, edge_index, *_op_sizes(num_nodes), graph,
                                   list(inputs))
        eager = type(graph) is int and not torch.compiler.is_compiling()
        # The graph's entry: it stays registered until the backward has run,
        # even if the cache drops it first. Only in eager mode: traced, the
        # handle is symbolic (dynamo takes a SymInt's type for int, and a
        # non-strict trace, which is_compiling() does not see, passes a
        # SymInt; PyTorch 2.11 then refused the traced call's output).
        entry = None
        if eager:
            ref = _ENTRY_OF.get(graph)
            entry = ref() if ref is not None else None
        # The inputs the backward does not read (`layout.small` and
        # `layout.sized` positions: biases, RGCN's [N, R, out] rows, whose
        # gradient needs only the graph) are not kept when large: an empty
        # tensor stands for each (call_backward skips them). A small one (a
        # bias) is kept: making the empty tensor would cost the call more
        # than the bytes are worth. In eager mode it is kept on ctx, not
        # saved: autograd would check its version counter, and a write to it
        # between the forward and the backward (a bias changed in place)
        # raised PyTorch's "modified by an inplace operation" where
        # PyTorch's own ops (and so PyG) save no bias.
        kept = None
        if layout.sized:  # (sizes read per call: most functions have none)
            kept_at = []
            for i in layout.sized:
                t = inputs[i]
                if t.numel() * t.element_size() >= _DROP_BYTES:
                    inputs = inputs[:i] + (_placeholder(t),) + inputs[i + 1:]
                elif eager:
                    kept_at.append(i)
            if eager and (layout.small or kept_at):
                at = tuple(sorted(layout.small + tuple(kept_at)))
                kept = (at, tuple(inputs[i] for i in at))
                inputs = tuple(t for i, t in enumerate(inputs) if i not in at)
        elif eager and layout.small:
            # (positions fixed by the function: one itemgetter each way)
            kept = (layout.small, layout.take_small(inputs))
            inputs = layout.take_saved(inputs)
        # (One attribute: each attribute set on ctx costs a dictionary
        # insertion through THPFunction's setattr.)
        ctx.state = (target, num_nodes, results, graph, layout, kept, entry)
        ctx.save_for_backward(edge_index, *inputs, *outs)
        ctx.mark_non_differentiable(*outs[results:])
        # The outputs past the results (saved for the backward) never get a
        # gradient, nor may an unused result: None, not tensors of zeros
        # that autograd would allocate and fill (a kernel each) per call.
        ctx.set_materialize_grads(False)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        if torch.is_grad_enabled():
            # create_graph=True: the gradient would have to be differentiable.
            raise RuntimeError("gnnc: double backward (create_graph=True, a "
                               "gradient of a gradient) is not supported")
        saved = ctx.saved_tensors
        target, num_nodes, results, graph, layout, kept, _ = ctx.state
        n = layout.num_inputs
        if kept is None:
            inputs, outs = saved[1:n + 1], saved[n + 1:]
        else:
            at, tensors = kept
            end = n + 1 - len(at)
            outs = saved[end:]
            if at is layout.small:
                inputs = layout.merge(saved[1:end] + tensors)
            else:
                inputs = list(saved[1:end])
                for i, t in zip(at, tensors):  # (ascending: back at their positions)
                    inputs.insert(i, t)
        dys = [(g.contiguous() if g is not None else torch.zeros_like(o))
               for g, o in zip(grads[:results], outs)]
        try:
            dx = torch.ops.gnnc.call_backward(target, saved[0], *_op_sizes(num_nodes),
                                              graph, list(inputs), list(outs), dys)
        except RuntimeError as e:
            raise _translated(e) from None
        # (None for target, results, layout, edge_index, num_nodes, graph;
        # traced, the positions read one by one: dynamo does not trace an
        # itemgetter.)
        dx = dx + [None]
        return (None, None, None, None, None, None) + (
            tuple(dx[j] for j in layout.spread) if torch.compiler.is_compiling()
            else layout.scatter(dx))


class _StepLayout:
    """Where _Step puts a Function's tensors, decided once per Function
    (every call on it has the same arguments), from its `grad_args` (1-based
    positions after the graph whose gradients the backward returns, in its
    order): the inputs the backward does not read, `small` (a static shape
    under _DROP_BYTES: kept on ctx in eager mode) and `sized` (the rest: the
    size read per call, dropped when large); and item getters that pick the
    saved and the kept inputs, merge them back in position order
    (`merge(saved + kept)`) and spread the gradients over every input
    (`scatter(dx + [None])`, None where an input gets none; `spread`, its
    positions). The kept inputs exist only in eager mode, where the getters
    run; traced, only `spread` is read."""

    __slots__ = ("small", "sized", "num_inputs", "take_small", "take_saved", "merge",
                 "spread", "scatter")

    def __init__(self, num_inputs: int, grad_args: tuple, small: tuple, sized: tuple):
        self.num_inputs = num_inputs
        self.small, self.sized = small, sized
        saved = tuple(i for i in range(num_inputs) if i not in small)
        self.take_small, self.take_saved = _picker(small), _picker(saved)
        order = saved + small  # (what merge reads: the saved, then the kept)
        self.merge = _picker(tuple(order.index(i) for i in range(num_inputs)))
        where = {arg - 1: j for j, arg in enumerate(grad_args)}
        self.spread = tuple(where.get(i, len(grad_args)) for i in range(num_inputs))
        self.scatter = _picker(self.spread)


def _picker(at: tuple):
    """s -> tuple(s[i] for i in at), one C call (operator.itemgetter)."""
    if not at:
        return lambda s: ()
    if len(at) == 1:
        i = at[0]
        return lambda s: (s[i],)
    return operator.itemgetter(*at)


# An input the backward does not read is dropped from what autograd keeps
# from this size on (bytes).
_DROP_BYTES = 1 << 20


def _static_bytes(arg: dict) -> float:
    """An upper bound of the bytes of a signature argument whose shape is
    static (8 per element), infinity for one sized by the graph."""
    if arg.get("kind") in ("node", "edge", "src", "dst") or \
            not all(isinstance(d, int) and d >= 0 for d in arg.get("shape", [None])):
        return float("inf")
    size = 8
    for d in arg["shape"]:
        size *= d
    return size


def _placeholder(t: torch.Tensor) -> torch.Tensor:
    """An empty tensor of ``t``'s dtype and device: what the autograd step
    saves for an input its backward does not read (made in the mode being
    traced under torch.compile: a fake tensor there)."""
    return t.new_empty(0)


# autograd.Function.apply is Python before PyTorch 2.15: a pytree pass over
# the arguments (unwrapping dead functorch wrappers) before the C++ apply,
# some 30-50 us per call on the GPU machine's host. Where no functorch
# transform is active, nothing is being compiled and no argument is a
# functorch wrapper, that pass changes nothing: _apply_step calls the C++
# apply directly. From 2.15 on, Function.apply is the C++ one.
_BASE_APPLY = torch._C._FunctionBase.__dict__.get("apply")
_STEP_APPLY = _BASE_APPLY.__get__(None, _Step) if _BASE_APPLY is not None else None
_is_wrapped = getattr(getattr(torch._C, "_functorch", None),
                      "is_functorch_wrapped_tensor", None)
_DIRECT_APPLY = (_STEP_APPLY is not None and _is_wrapped is not None and
                 hasattr(torch._C, "_are_functorch_transforms_active") and
                 torch.autograd.Function.__dict__.get("apply") is not _BASE_APPLY)


# Whether a torch.func transform (grad, vmap, ...) is active (None: this
# PyTorch cannot say), read once: every call asks.
_TRANSFORMS_ACTIVE = getattr(torch._C, "_are_functorch_transforms_active", None)


def _functorch_active() -> bool:
    """Whether a torch.func transform (grad, vmap, ...) is active."""
    return bool(_TRANSFORMS_ACTIVE is not None and _TRANSFORMS_ACTIVE())


def _refuse_transforms(what: str, tensors: Sequence[torch.Tensor] = ()) -> None:
    """Refuses a call under torch.func's transforms and one on forward-mode
    AD dual tensors, which gnnc's ops do not support: under a transform the
    op met wrapper tensors without storage (PyTorch's error named neither
    gnnc nor a way out, and graph caches filled under it kept such tensors,
    failing every later call on that edge_index); a dual tensor's tangent
    was dropped (the result had none: a silently wrong forward derivative)."""
    if _functorch_active():
        raise RuntimeError(
            f"gnnc: {what} cannot run under torch.func's transforms (grad, vjp, "
            f"jacrev, jacfwd, vmap, ...); use torch.autograd (loss.backward(), "
            f"torch.autograd.grad)")
    if getattr(_forward_ad, "_current_level", -1) >= 0:
        for i, t in enumerate(tensors):
            if isinstance(t, torch.Tensor) and \
                    _forward_ad.unpack_dual(t).tangent is not None:
                raise RuntimeError(
                    f"gnnc: {what} argument #{i + 1} is a forward-mode AD dual "
                    f"tensor (torch.autograd.forward_ad): gnnc has no forward-mode "
                    f"derivatives; use reverse mode (torch.autograd.grad)")


def _apply_step(target, results, layout, edge_index, num_nodes, graph, tensors):
    """_Step.apply(target, ..., graph, *tensors), through the C++ apply
    where nothing needs the Python one (see above). (The wrapper check maps
    over the tensors: a generator over all the arguments cost 2 us a call.)"""
    if not _DIRECT_APPLY or torch._C._are_functorch_transforms_active() or \
            torch.compiler.is_compiling() or _is_wrapped(edge_index) or \
            any(map(_is_wrapped, tensors)):
        return _Step.apply(target, results, layout, edge_index, num_nodes, graph, *tensors)
    return _STEP_APPLY(target, results, layout, edge_index, num_nodes, graph, *tensors)


# --------------------------------------------------------------------------
# The user-facing callable.


class Function:
    """A compiled ``gnn`` function: ``fn(graph, *tensors)``.

    ``graph`` is a :class:`Graph` or an ``edge_index`` tensor (then pass
    ``num_nodes=``: an int, or ``(num_src, num_dst)`` for a bipartite
    graph). Tensors follow the function's arguments after the
    ``!gnn.graph``: a dynamic leading size is the node count (or the edge
    count for ``{gnn.domain = "edge"}`` arguments, a bipartite graph's source
    or destination count for ``"src"`` and ``"dst"``), static sizes must match,
    the dtype must be the IR's (f32: ``torch.float32``, f64:
    ``torch.float64``, bf16: ``torch.bfloat16``, f16: ``torch.float16``;
    a function mixing them says so per argument), and all tensors live on
    the graph's device. Returns
    one tensor, or a tuple for several results. Differentiable in every
    float argument.
    """

    def __init__(self, compiled: _Compiled, function: str):
        compiled.prepare(function)
        self._compiled = compiled
        self.function = function
        self.signature = compiled.signature(function)
        self._key = compiled.key
        self._results = len(self.signature["results"])
        info = compiled.grad_info.get(function)
        self._forward = info["forward"] if info else None
        self._grad_error = compiled.grad_error.get(function)
        # The ops' handles: the function, and its training forward with the
        # arguments that get gradients.
        self._target = compiled.target(function)
        self._step = compiled.target(info["forward"], function) if info else None
        self._grad_args = tuple(info["grads"]) if info else ()
        self._typed = bool(self.signature["args"][0].get("typed"))
        self._relations = compiled.relations(function) if self._typed else None
        # The arguments (0-based, after the graph) the backward does not
        # read: not kept for it.
        # (small, sized): those of a static shape smaller than _DROP_BYTES
        # (biases: kept, never dropped, whatever their dtype), and the others
        # (their size read on each call: _Step.forward).
        read = {i - 1 for kind, i in info["residuals"] if kind == "arg"} if info else set()
        unread = [i for i in range(len(self.signature["args"]) - 1)
                  if i not in read] if info else []
        args = self.signature["args"][1:]
        small = tuple(i for i in unread if _static_bytes(args[i]) < _DROP_BYTES)
        self._layout = _StepLayout(len(args), self._grad_args, small,
                                   tuple(i for i in unread if i not in small))

    def __call__(self, graph: Union[Graph, torch.Tensor], *tensors: torch.Tensor,
                 num_nodes: Union[int, Tuple[int, int], None] = None):
        if not torch.compiler.is_compiling():
            # First: under vmap the tensors' shapes lack the batch dimension.
            _refuse_transforms(f"@{self.function}", tensors)
        order = None
        if isinstance(graph, Graph):
            edge_index = graph.edge_index
            # (A bipartite function on a Graph: num_nodes=(num_src, num_dst).)
            n = graph.num_nodes if num_nodes is None else _check_sizes(
                tuple(num_nodes) if isinstance(num_nodes, (tuple, list)) else num_nodes)
            order = graph.node_order
            if self._typed and graph.edge_type is None:
                raise TypeError(
                    f"gnnc: @{self.function} takes a typed graph (!gnn.graph<typed>) "
                    f"but this gnnc.Graph has no edge_type")
            if self._typed and not torch.compiler.is_compiling():
                # (Traced, the ids are not read: the graph op's lookup
                # checks them when the compiled code runs, _run.)
                _check_relations(self.function, self._relations, graph)
        else:
            _check_edge_index(graph)
            edge_index = graph
            if self._typed:
                raise TypeError(
                    f"gnnc: @{self.function} takes a typed graph (!gnn.graph<typed>): "
                    f"pass gnnc.Graph(edge_index, num_nodes, edge_type=...) rather "
                    f"than an edge_index")
            if num_nodes is None:
                raise TypeError("gnnc: pass num_nodes= with an edge_index "
                                "(or a gnnc.Graph)")
            if isinstance(num_nodes, (tuple, list)):
                if len(num_nodes) != 2:
                    raise ValueError(f"gnnc: a bipartite graph's num_nodes is "
                                     f"(num_src, num_dst), got {num_nodes!r}")
                num_nodes = tuple(num_nodes)
            n = _check_sizes(num_nodes)
        # The node counts the function's graph takes: one count for a graph
        # of one node set ((n, n) is that count), (num_src, num_dst) for a
        # bipartite one. (Either was taken and the tensors' shapes then
        # refused, naming an argument rather than num_nodes; (4, 6) on a
        # graph of one node set ran on 6 nodes.)
        bipartite = bool(self.signature["args"][0].get("bipartite"))
        if bipartite and not isinstance(n, tuple):
            raise ValueError(f"gnnc: @{self.function} takes a bipartite graph "
                             f"(!gnn.graph<bipartite>): pass num_nodes=(num_src, "
                             f"num_dst), got {n}")
        if not bipartite and isinstance(n, tuple):
            if n[0] != n[1]:
                raise ValueError(f"gnnc: @{self.function} takes a graph of one node "
                                 f"set: num_nodes is one count (or (n, n)), got {n}")
            n = n[0]
        if order is not None and n != graph.num_nodes:
            raise ValueError(f"gnnc: num_nodes={n} with a reordered graph of "
                             f"{graph.num_nodes} nodes (Graph.reorder)")
        _check_inputs(self.signature, self.function, edge_index, n, tensors)
        if order is None:
            return self._run(edge_index, n, tensors)
        # A reordered graph (Graph.reorder): node tensors in the caller's
        # order, permuted in and out.
        args = self.signature["args"][1:]
        tensors = tuple(t.index_select(0, order) if a["kind"] == "node" else t
                        for t, a in zip(tensors, args))
        outs = self._run(edge_index, n, tensors)
        single = not isinstance(outs, tuple)
        outs = tuple(o.index_select(0, graph._node_rank) if r["kind"] == "node" else o
                     for o, r in zip((outs,) if single else outs,
                                     self.signature["results"]))
        return outs[0] if single else outs

    def _apply(self, edge_index: torch.Tensor, num_nodes, tensors, graph=None):
        """The call after the Python-side checks (gnnc.nn calls this: the
        op checks the tensors again, raising the same exception types);
        `graph`: the graph's handle where the caller looked it up."""
        if not torch.compiler.is_compiling():
            _refuse_transforms(f"@{self.function}", tensors)
        return self._run(edge_index, num_nodes, tensors, graph)

    def _run(self, edge_index: torch.Tensor, num_nodes, tensors, graph=None):
        """_apply after its refusal of torch.func transforms (which __call__
        makes first, before its own checks)."""
        if graph is None:
            # (A typed function's relation count: traced, the graph op
            # checks the ids when the compiled code runs.)
            relations = self._relations if self._relations is not None else -1
            graph = _handle(edge_index, num_nodes, relations, self.function)
        return self._launch(edge_index, num_nodes, tensors, graph,
                            torch.is_grad_enabled() and any(t.requires_grad for t in tensors))

    def _launch(self, edge_index: torch.Tensor, num_nodes, tensors, graph: int,
                trains: bool):
        """The op call on the graph's handle: the training step where
        `trains` (autograd records and a tensor needs a gradient), else the
        plain function. (A gnnc.nn layer's plan calls this directly, with
        `trains` decided when it chose the function: _plan._Plan._call.)"""
        if edge_index.is_cuda and not torch.compiler.is_compiling() and \
                torch._C._cuda_getCurrentRawStream(edge_index.get_device()) != 0:
            _keep_for_stream(tensors, edge_index.device)
        try:
            if trains:
                if self._forward is None:
                    # gnn-run --grad differentiates as gnnc does (every
                    # float argument where none is marked).
                    raise CompileError(self._grad_error + "\n" + _reproducer(
                        self._compiled, ["gnn-run"],
                        ["--function=" + self.function, "--grad",
                         "--graph=" + _graph_spec(self.signature)]))
                outs = _apply_step(self._step, self._results, self._layout, edge_index,
                                   num_nodes, graph, tensors)
                if self._results == 1:
                    return outs[0]
                outs = outs[:self._results]
            else:
                outs = torch.ops.gnnc.call(self._target, edge_index,
                                           *_op_sizes(num_nodes), graph, list(tensors))
        except RuntimeError as e:
            raise _translated(e) from None
        return outs[0] if len(outs) == 1 else tuple(outs)

    def source(self, graph: Graph) -> str:
        """The CUDA C++ generated for ``graph`` (a CUDA graph)."""
        entry = _graphs.get(graph.edge_index, graph.num_nodes)
        if entry.device is None:
            raise ValueError("gnnc: source() needs a graph on a CUDA device")
        # The graph's own variant, not a fallback (GNNC_JIT=async).
        return self._compiled.cuda_function(self.function, entry.statistics,
                                            wait=True).source()

    def __repr__(self) -> str:
        return f"gnnc.Function(@{self.function})"

    # A Function holds a parsed module (and compiled kernels): a deep copy
    # shares them (it is immutable to its callers, as a Python function is
    # to copy.deepcopy); a pickle holds the IR text and compiles it again
    # when loaded (a module of a model that keeps a Function: torch.save,
    # copy.deepcopy, multiprocessing).
    def __deepcopy__(self, memo) -> "Function":
        return self

    def __reduce__(self):
        compiled = self._compiled
        return (_unpickle_function, (compiled.text, compiled.name, self.function))


def _unpickle_function(text: str, name: str, function: str) -> Function:
    return Function(_compile_text(text, name), function)


class _SourceNotFound(CompileError, FileNotFoundError):
    """A ``.mlir`` path that names no file: both a :class:`CompileError` and
    a ``FileNotFoundError``."""


def _looks_like_path(source: str) -> bool:
    """The rule for a string given to :func:`compile`: one line that ends in
    ``.mlir`` or names an existing file or folder is a path; anything else is
    IR text."""
    if "\n" in source or "\r" in source:
        return False
    return source.endswith(".mlir") or os.path.isfile(source) or os.path.isdir(source)


def _read_source(path) -> Tuple[str, str]:
    """(the text of the file at ``path``, its name for diagnostics)."""
    try:
        name = os.fsdecode(os.fspath(path))
    except TypeError:
        raise TypeError(f"gnnc.compile: path must be a str or os.PathLike, got "
                        f"{type(path).__name__}") from None
    try:
        # Opened without blocking and checked on the descriptor: a FIFO (or
        # a device) is refused, not waited on.
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            os.close(fd)
            raise
        if not stat.S_ISREG(mode):
            os.close(fd)
            what = "a directory" if stat.S_ISDIR(mode) else \
                "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
            raise CompileError(f"gnnc: {name}: cannot read the file: it is {what}")
        with open(fd, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise _SourceNotFound(errno.ENOENT, f"gnnc: {name}: no such file") from None
    except OSError as e:
        raise CompileError(f"gnnc: {name}: cannot read the file: "
                           f"{e.strerror or e}") from None
    try:
        return data.decode("utf-8"), name
    except UnicodeDecodeError as e:
        raise CompileError(f"gnnc: {name}: not UTF-8 text (byte {e.start}: "
                           f"{e.reason})") from None


def compile(source: Optional[str] = None, function: Optional[str] = None, *,
            path=None) -> Function:
    """Compiles ``gnn`` IR and returns the callable of ``function`` (default:
    the module's only public function).

    ``path=`` names a ``.mlir`` file; ``source`` is IR text, or a path by this
    rule: a ``str`` of one line that ends in ``.mlir`` or names an existing
    file or folder is read as a path, anything else is parsed as IR (an
    ``os.PathLike`` is always a path). A path that names no file raises
    :class:`CompileError` (also a ``FileNotFoundError``) saying "no such
    file"; ``bytes`` raise ``TypeError``. IR that does not parse or verify
    raises :class:`CompileError` with located diagnostics. Compiling the same
    text again returns the cached module.

    ``source`` may also be a module built with :mod:`gnnc.ir`
    (``Builder.finish()``): no text is parsed; it is cached by its printed
    form, so building the same function again returns the cached module."""
    if function is not None and not isinstance(function, str):
        raise TypeError(f"gnnc.compile: function is the name of a function of the "
                        f"module (a str) or None (its only public one), got "
                        f"{type(function).__name__} {function!r}")
    if isinstance(source, _C.Module):
        if path is not None:
            raise TypeError("gnnc.compile: give a module or path=, not both")
        built = source
        with _LOCK:
            # A module compiled before is its _Compiled's (differentiation
            # adds functions to it, so its text no longer names it).
            key = _BUILT.get(id(built))
            if key is None:
                key = "ir:" + hashlib.sha256(built.text().encode("utf-8")).hexdigest()[:24]
            compiled = _modules.get(key)
            if compiled is None:
                compiled = _Compiled(key, built, built.text(), "the built module")
                _modules[key] = compiled
                _BUILT[id(built)] = key
        return _function_of(compiled, function, "the built module")
    file = None
    if path is not None:
        if source is not None:
            raise TypeError("gnnc.compile: give IR text or path=, not both")
        source, name = _read_source(path)
        file = name
    elif isinstance(source, os.PathLike):
        source, name = _read_source(source)
        file = name
    elif isinstance(source, (bytes, bytearray, memoryview)):
        raise TypeError(f"gnnc.compile: the source must be str (IR text, or a "
                        f"path), got {type(source).__name__}; decode bytes first "
                        f"(source.decode('utf-8')) or pass path=")
    elif not isinstance(source, str):
        raise TypeError(f"gnnc.compile: the source must be str (IR text, or a "
                        f"path) or path=, got {type(source).__name__}")
    elif _looks_like_path(source):
        source, name = _read_source(source)
        file = name
    else:
        name = "<string>"
        if "\n" not in source and "\r" not in source and source.strip() and \
                not any(c.isspace() for c in source.strip()):
            # One word: meant as a path more likely than as IR.
            try:
                compiled = _compile_text(source, name, file)
            except CompileError as e:
                raise CompileError(
                    f"{e}\n(gnnc.compile read {source!r} as IR text: a string is a "
                    f"path where it is one line that ends in .mlir or names an "
                    f"existing file or folder; no such file exists here)") from None
            return _function_of(compiled, function, name)
    return _function_of(_compile_text(source, name, file), function, name)


def _compile_text(source: str, name: str, file: Optional[str] = None) -> _Compiled:
    """The module of IR text ``source`` (diagnostics located in ``name``;
    ``file``: the file it was read from), parsed once per text and name."""
    try:
        text = source.encode("utf-8")
    except UnicodeEncodeError as e:
        raise CompileError(f"gnnc: {name}: the IR is not valid Unicode text "
                           f"(character {e.start}: {e.reason})") from None
    # The name is part of the key: diagnostics are located in it.
    key = hashlib.sha256(name.encode("utf-8", "surrogateescape") + b"\0" +
                         text).hexdigest()[:24]
    with _LOCK:
        compiled = _modules.get(key)
        if compiled is None:
            try:
                module = _C.Module.parse(source, name)
            except CompileError as e:
                raise CompileError(f"{e}\n" + _reproducer(
                    None, ["gnn-opt"], [], source, name, key, file)) from None
            compiled = _Compiled(key, module, source, name, file)
            _modules[key] = compiled
    return compiled


def _function_of(compiled: _Compiled, function: Optional[str], name: str) -> Function:
    """The callable of ``function`` (default: the only public one)."""
    if function is None:
        names = compiled.functions
        if len(names) != 1:
            raise ValueError(f"gnnc: {name} has {len(names)} public functions "
                             f"({', '.join(names) or 'none'}); pass function=")
        function = names[0]
    return Function(compiled, function)
