"""`gnnc.MessagePassing`: PyTorch Geometric's message-passing base class,
compiled.

A subclass writes ``message`` (and optionally ``update``) as for PyG;
``propagate`` traces them (`gnnc._trace`) into one `gnn` function
(`gnnc._lower`, built with `gnnc.ir`), which `gnnc.compile` turns into fused
forward and backward kernels. See docs/Python-mp.md.
"""

import dis
import inspect
import itertools
import math
import operator
import types
import warnings
import weakref
from typing import Optional

import torch
from torch import Tensor

from . import _core
from ._core import CompileError
from . import _lower, _trace
from ._trace import EdgeIndexProxy, IndexProxy, Proxy, TraceError, Tracer

__all__ = ["MessagePassing", "softmax", "TraceError", "FallbackWarning"]

_AGGRS = {"sum": "sum", "add": "sum", "mean": "mean", "max": "max", "min": "min",
          "var": "var", "std": "std"}
_TORCH_REDUCE = {"sum": "sum", "mean": "mean", "max": "amax", "min": "amin"}
_DTYPES = {torch.float32: "f32", torch.float64: "f64"}
_SPECIAL = ("index", "edge_index_i", "edge_index_j", "edge_index", "ptr", "size",
            "size_i", "size_j", "dim_size")


class FallbackWarning(UserWarning):
    """A layer built with ``fallback="torch"`` runs unfused in PyTorch
    because its methods could not be traced (once per configuration)."""


# (layer, element type, traced structure) -> (gnnc.Function, IR text)
_COMPILED = {}

# Traced calls a layer keeps (per configuration key, see _Key), oldest
# dropped first.
_PLANS_PER_LAYER = 32


def softmax(src, index=None, ptr=None, num_nodes=None, dim: int = 0):
    """PyG's ``softmax(src, index)``: the softmax of ``src`` over the edges
    that share ``index`` (edge_index[1]: each node's incoming edges). Inside
    a traced ``message`` it is ``gnn.edge_softmax`` (pass the message's
    ``index`` argument); on plain tensors it computes the same in PyTorch
    (the unfused path)."""
    if isinstance(src, Proxy) or isinstance(index, IndexProxy):
        if ptr is not None:
            _trace.fail("gnnc.softmax(ptr=...)", "is not supported in traced code "
                        "(pass index)")
        if dim != 0:
            _trace.fail(f"gnnc.softmax(dim={dim})", "normalises over the edges "
                        "(dim=0) only in traced code")
        return _trace.edge_softmax(src, index)
    if ptr is not None:
        raise NotImplementedError("gnnc.softmax: ptr= is not supported; pass index")
    if index is None or dim != 0:
        raise ValueError("gnnc.softmax: expected index (the edges' destination "
                         "nodes) and dim=0")
    n = int(num_nodes) if num_nodes is not None else (
        int(index.max()) + 1 if index.numel() else 0)
    idx = index.view(-1, *([1] * (src.dim() - 1))).expand_as(src)
    shape = (n,) + tuple(src.shape[1:])
    smax = src.new_zeros(shape).scatter_reduce(0, idx, src.detach(), "amax",
                                               include_self=False)
    out = (src - smax.index_select(0, index)).exp()
    total = src.new_zeros(shape).scatter_add(0, idx, out)
    return out / total.index_select(0, index)


_SIGNATURES = {}


def _params(method):
    """The parameters of a bound method (without self), read once per
    function."""
    fn = getattr(method, "__func__", method)
    params = _SIGNATURES.get(fn)
    if params is None:
        params = list(inspect.signature(method).parameters.values())
        _SIGNATURES[fn] = params
    return params


_NAMES = {}
# (message's function, propagate's keywords) -> the node tensors message lifts.
_STEMS = {}


def _param_names(method) -> tuple:
    """The parameter names of a bound method (without self), once per
    function."""
    fn = getattr(method, "__func__", method)
    names = _NAMES.get(fn)
    if names is None:
        names = _NAMES[fn] = tuple(p.name for p in _params(method))
    return names


def _stems(names, kwargs) -> tuple:
    """The node tensors a message with parameters ``names`` lifts (``x`` of
    ``x_i`` / ``x_j``) among propagate's keywords."""
    return tuple(name[:-2] for name in names
                 if name[-2:] in ("_i", "_j") and name[:-2] in kwargs)


def _special_argument(layer: str, p, n: int, dst, src, edge_index):
    """A message argument that propagate's keywords do not name: PyG's
    ``index``/``edge_index_i`` (``dst``), ``edge_index_j`` (``src``),
    ``edge_index`` (``edge_index()``), ``ptr``, the sizes, or the default."""
    name = p.name
    if name in ("index", "edge_index_i"):
        return dst
    if name == "edge_index_j":
        return src
    if name == "edge_index":
        return edge_index()
    if name == "ptr":
        return None
    if name in ("size_i", "size_j", "dim_size"):
        return n
    if name == "size":
        return (n, n)
    if p.default is not p.empty:
        return p.default
    raise TypeError(f"{layer}.message: required argument {name!r} was not "
                    f"passed to propagate")


class MessagePassing(torch.nn.Module):
    """Base class of message-passing layers, as PyG's ``MessagePassing``,
    compiled by gnnc.

    - ``aggr``: ``"sum"`` (or ``"add"``), ``"mean"``, ``"max"``, ``"min"``,
      ``"var"``, ``"std"`` (PyG's), PyG's ``Aggregation`` module of one of
      them at its defaults, or a list of them (or a ``MultiAggregation``
      with ``mode="cat"``): the aggregations concatenated along the last
      dimension, all computed from one message in one compiled function;
      PyG's other aggregations raise ``NotImplementedError``;
    - ``flow``: ``"source_to_target"`` (default) or ``"target_to_source"``;
    - ``fallback``: None (a layer gnnc cannot trace raises
      :class:`gnnc.TraceError`) or ``"torch"`` (it runs message, aggregation
      and update unfused in PyTorch, with a :class:`FallbackWarning` once per
      configuration);
    - PyG's other arguments, so that a PyG layer's ``__init__`` runs as
      written: ``node_dim`` 0 or -2 (gnnc propagates along the first
      dimension: PyG's meaning of both for ``[N, C]`` tensors, and of 0,
      which PyG's GATConv passes, for ``[N, H, C]``; with -2 a node tensor
      of three or more dimensions that PyG reads along its second-to-last
      dimension, a batch ``[B, N, C]``, is refused), ``decomposed_layers``
      (PyG's memory saving, which gnnc's fused kernels do not need: the same
      result), ``aggr_kwargs`` None or what PyG's defaults are
      (``mode="cat"``, ``semi_grad=False``); other values raise.

    Subclasses define ``message(self, ...)``: arguments ending in ``_i`` /
    ``_j`` are propagate's node tensors read at each edge's destination /
    source; other names are propagate's keyword arguments (edge tensors
    ``[E, ...]``, or anything else as it is) or ``index`` (for
    :func:`gnnc.softmax`), ``edge_index_i``, ``edge_index_j``, ``ptr``
    (None), ``size_i``, ``size_j``, ``dim_size`` (the node count). Optionally
    ``update(self, aggr_out, ...)``, over node tensors.
    """

    def __init__(self, aggr: str = "sum", *, flow: str = "source_to_target",
                 fallback: Optional[str] = None, node_dim: int = -2,
                 decomposed_layers: int = 1, aggr_kwargs: Optional[dict] = None):
        super().__init__()
        aggr = _aggregators("gnnc.MessagePassing", aggr)
        if node_dim not in (0, -2) or isinstance(node_dim, bool):
            raise NotImplementedError(
                f"gnnc.MessagePassing: node_dim={node_dim!r}: gnnc propagates along "
                f"the first dimension of node tensors (node_dim=0, or PyG's default "
                f"-2 for [N, C] tensors)")
        if not isinstance(decomposed_layers, int) or isinstance(decomposed_layers, bool) \
                or decomposed_layers < 1:
            raise ValueError(f"gnnc.MessagePassing: decomposed_layers must be a positive "
                             f"int, got {decomposed_layers!r}")
        for k, v in (aggr_kwargs or {}).items():
            if (k, v) not in (("mode", "cat"), ("semi_grad", False)):
                raise NotImplementedError(
                    f"gnnc.MessagePassing: aggr_kwargs {k}={v!r} is not supported "
                    f"(gnnc's aggregations take PyG's defaults: mode='cat', "
                    f"semi_grad=False)")
        if flow not in ("source_to_target", "target_to_source"):
            raise ValueError(f"gnnc.MessagePassing: flow must be 'source_to_target' or "
                             f"'target_to_source', got {flow!r}")
        if fallback not in (None, "torch"):
            raise ValueError(f"gnnc.MessagePassing: fallback must be None or 'torch', "
                             f"got {fallback!r}")
        self.__dict__["_tensor_names"] = ()  # see _note_tensor
        self.__dict__["_value_names"] = ()
        self.aggr = aggr[0] if len(aggr) == 1 else aggr
        self.flow = flow
        # PyG's attributes, which a layer's own code may read.
        self.node_dim = node_dim
        self.decomposed_layers = decomposed_layers
        self.fallback = fallback
        self._failed = {}
        self._plans = {}
        # What changes from call to call, in one object whose identity does
        # not (the configuration's fingerprint reads the layer's attributes
        # by identity, see _ModulePart).
        self._mp = _Status()
        self._mp_id = next(_IDS)
        # message's parameter names, read here once: propagate reads them
        # where torch.compile traces strictly, and dynamo cannot look a
        # function up in a dict (_params' cache).
        self._message_params = tuple(p.name for p in _params(self.message))
        # The class attributes message / update read (plain values, see
        # _class_values), named here once for the same reason: _guarded
        # passes their values into the compiled call, so dynamo guards them.
        self._class_reads = tuple(name for name, _ in _class_values(self))
        _LAYERS[self._mp_id] = self
        _hook_dynamo()

    def __getstate__(self):
        """For copy.deepcopy, pickle and torch.save: the layer without its
        compiled plans and per-call state (native objects, not picklable;
        a copy traces and compiles again, from the kernel cache)."""
        state = dict(self.__dict__)
        state.update(_failed={}, _plans={}, _mp=_Status())
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        # A copy is a layer of its own: its own id in the registry the
        # compiled forward looks layers up in (a deep copy shared its
        # original's, and under torch.compile ran through the original, or
        # failed once the original was gone).
        self.__dict__["_mp_id"] = next(_IDS)
        _LAYERS[self._mp_id] = self
    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if not torch.compiler.is_compiling():
            self._note_tensor(name)

    def __delattr__(self, name):
        super().__delattr__(name)
        if not torch.compiler.is_compiling():
            self._note_tensor(name)

    def _note_tensor(self, name):
        """Keeps ``_tensor_names`` (the plain tensor attributes) and
        ``_value_names`` (the other attributes the key reads) up to date:
        under torch.compile propagate reads them by name where dynamo traces
        strictly, so the tensors reach the graph and dynamo guards the
        values (dynamo in PyTorch 2.11 cannot iterate a module's
        ``__dict__``)."""
        if name in _INTERNAL:
            return
        d = self.__dict__
        kind = None
        if name in d:
            kind = "_tensor_names" if isinstance(d[name], Tensor) else "_value_names"
        for table in ("_tensor_names", "_value_names"):
            names = d.get(table, ())
            if (table == kind) != (name in names):
                d[table] = names + (name,) if table == kind else \
                    tuple(k for k in names if k != name)

    # -- what subclasses override -------------------------------------------
    def message(self, x_j):
        return x_j

    def update(self, inputs):
        return inputs

    def reset_parameters(self) -> None:
        """PyG's base resets its aggregation module; gnnc's aggregations hold
        no parameters. Here so that a layer's `super().reset_parameters()`
        runs as under PyG."""

    # PyG's API that gnnc does not trace: refused by name (a plain
    # AttributeError before), with the way out.
    def _not_traced(name, why):
        def refuse(self, *args, **kwargs):
            raise NotImplementedError(
                f"gnnc.MessagePassing: {type(self).__name__}.{name} is not supported: "
                f"{why}")
        refuse.__name__ = name
        return refuse

    edge_updater = _not_traced(
        "edge_updater", "compute the edge values inside message (gnnc fuses them "
        "with the aggregation), or subclass torch_geometric.nn.MessagePassing")
    edge_update = _not_traced("edge_update", "see edge_updater")
    for _hook in ("propagate", "message", "aggregate", "message_and_aggregate",
                  "edge_update"):
        for _when in ("", "_pre"):
            _n = f"register_{_hook}_forward{_when}_hook"
            locals()[_n] = _not_traced(
                _n, "message, aggregate and update run as one compiled function, "
                "with no Python between them to call a hook from")
    explain_message = _not_traced("explain_message", "PyG's explainers need PyG's "
                                  "MessagePassing")
    del _not_traced, _hook, _when, _n

    @property
    def explain(self) -> Optional[bool]:
        """PyG's switch for masking the messages with ``_edge_mask``: always
        None here (off, PyG's default)."""
        return None

    @explain.setter
    def explain(self, value) -> None:
        # True was ignored (the messages were not masked): refused.
        if value is True:
            raise NotImplementedError(
                f"gnnc.MessagePassing: {type(self).__name__}.explain = True is not "
                f"supported: gnnc does not mask messages with an edge mask (PyG's "
                f"explainers need PyG's MessagePassing; multiply message by a mask "
                f"passed to propagate instead)")

    # -- the public surface --------------------------------------------------
    @property
    def _uncached(self) -> Optional[str]:
        """Why the last call had to trace (None: its configuration was keyed)."""
        return self._mp.uncached

    def gnn_ir(self) -> str:
        """The printed `gnn` function of the last call that was traced and
        compiled (before differentiation)."""
        if self._mp.gnn_ir is None:
            raise RuntimeError(f"gnnc.MessagePassing: {type(self).__name__} has not "
                               f"compiled a function yet (call the layer first)")
        return self._mp.gnn_ir

    def propagate(self, edge_index, size=None, **kwargs):
        """Messages along ``edge_index`` ([2, E], row 0 the sources), their
        aggregation at the targets and ``update``, as one compiled function
        (or, with ``fallback="torch"`` and a layer that does not trace, in
        PyTorch).

        Under torch.compile the graph's handle is looked up here, traced
        strictly; tracing message/update and gnnc.compile run as plain
        Python at trace time (torch.compiler.nonstrict_trace), with the
        layer's tensors passed in: no graph break."""
        layer = type(self).__name__
        edge_index, n = self._graph(layer, edge_index, size, kwargs)
        if self.flow == "target_to_source":
            edge_index = _flip(edge_index)
        if torch.compiler.is_compiling():
            graph = _core._handle(edge_index, n)
            state = {".".join(path): t for path, t in _compiled_tensors(self, ())}
            # A nonstrict_trace function takes tensors, numbers and
            # containers of them: None keywords travel as names.
            nones = {k: 0 for k, v in kwargs.items() if v is None}
            for k, v in kwargs.items():
                if v is not None and not _traceable_argument(v):
                    raise TypeError(
                        f"{layer}.propagate: under torch.compile the keyword {k!r} must "
                        f"be a tensor, a number, None or a tuple/list of those, got "
                        f"{type(v).__name__} (keep other values as attributes of the "
                        f"layer)")
            kwargs = {k: v for k, v in kwargs.items() if v is not None}
            return _run(self._mp_id, self.training, edge_index, n, graph, kwargs, state,
                        _guarded(self), nones)
        if _frame_callback() is None:  # no dynamo frame hook to keep out
            return self._propagate(edge_index, n, kwargs)
        return _eager(self, edge_index, n, kwargs)

    def _propagate(self, edge_index, n, kwargs, graph=None):
        key = self._key(kwargs, n, edge_index.size(1))
        plan = self._plans.get(key) if key is not None else None
        if plan is not None:
            return self._replay(plan, edge_index, n, kwargs, graph)
        layer = type(self).__name__
        self._check_node_dim(layer, edge_index, kwargs)
        pre = self._configuration(kwargs)
        if pre in self._failed:
            return self._run_torch(edge_index, n, kwargs)
        try:
            return self._run_traced(layer, edge_index, n, kwargs, key, graph)
        except TraceError as e:
            if self.fallback != "torch":
                raise
            self._failed[pre] = str(e)
            reason = str(e).split('pass fallback="torch"')[0].rstrip(" :;\n")
            warnings.warn(f"{reason}; running its message/update unfused in PyTorch "
                          f"(fallback='torch')", FallbackWarning, stacklevel=3)
            return self._run_torch(edge_index, n, kwargs)

    def _check_node_dim(self, layer, edge_index, kwargs):
        """PyG's node_dim=-2 (its default) reads a node tensor of three or
        more dimensions along its second-to-last dimension (``[B, N, C]``, a
        batch of node features); gnnc propagates along the first (``[N, H,
        C]``, as node_dim=0). Where PyG's reading fits the graph too (every
        edge id below that dimension's size) PyG computes another answer:
        refused. Checked when a configuration traces (its first call: the
        ids are read then); under torch.compile, whose tensors hold no
        values then, only a second-to-last size at least the first is
        refused (no id below the rows is then outside it)."""
        if self.node_dim != -2 or edge_index.size(1) == 0:
            return
        top = None
        for stem in self._lifted_stems(kwargs):
            value = kwargs[stem]
            for t in value if isinstance(value, (tuple, list)) else (value,):
                if not isinstance(t, Tensor) or t.dim() < 3:
                    continue
                rows, nodes = t.size(0), t.size(-2)
                if nodes < rows:
                    if _core._is_fake(edge_index):
                        continue
                    if top is None:
                        top = int(edge_index.max())
                    if top >= nodes:
                        continue  # PyG's reading fails: gnnc's is the one
                raise NotImplementedError(
                    f"{layer}: {stem} has shape {list(t.shape)}: with node_dim=-2 "
                    f"(PyG's default) PyG propagates a tensor of three or more "
                    f"dimensions along its second-to-last dimension (here {nodes} "
                    f"nodes, every edge id below it), gnnc.MessagePassing along the "
                    f"first only ({rows} nodes); pass node_dim=0 if the nodes are "
                    f"the first dimension, or move them there "
                    f"({stem}.transpose(0, -2))")

    # PyG's aggregate, for the unfused path (overriding it is not traced).
    def aggregate(self, inputs: Tensor, index: Tensor, ptr=None, dim_size=None):
        def reduce(values, how):
            out = values.new_zeros((dim_size,) + tuple(values.shape[1:]))
            idx = index.view(-1, *([1] * (values.dim() - 1))).expand_as(values)
            return out.scatter_reduce(0, idx, values, _TORCH_REDUCE[how],
                                      include_self=False)
        outs = _aggregations(_aggregators(type(self).__name__, self.aggr), inputs, reduce)
        return outs[0] if len(outs) == 1 else torch.cat(outs, dim=-1)

    # -- inputs ---------------------------------------------------------------
    def _graph(self, layer, edge_index, size, kwargs):
        from .nn import _common
        if _common.is_sparse(edge_index):
            if getattr(type(self), "message_and_aggregate", None) is not None:
                # PyG calls it in place of message and the aggregation here;
                # running message instead answered another sum where the two
                # differ (a weighted spmm over a message that ignores weights).
                raise NotImplementedError(
                    f"{layer} defines message_and_aggregate, which PyG calls in "
                    f"place of message and the aggregation for a sparse adjacency; "
                    f"gnnc.MessagePassing compiles message and the aggregation and "
                    f"never calls it, so their results could differ: remove "
                    f"message_and_aggregate (gnnc fuses message and aggregation "
                    f"itself) or pass edge_index as a [2, E] tensor (for which PyG "
                    f"calls message too)")
            edge_index, size = self._adjacency(layer, edge_index, size, kwargs)
        if not isinstance(edge_index, Tensor):
            raise TypeError(f"{layer}: expected edge_index to be a torch.Tensor [2, E] "
                            f"or a sparse adjacency, got {type(edge_index).__name__}")
        if edge_index.dtype not in (torch.int64, torch.int32) or \
                edge_index.dim() != 2 or edge_index.size(0) != 2:
            raise ValueError(f"{layer}: expected edge_index of shape [2, num_edges] "
                             f"(int64 or int32), got {tuple(edge_index.shape)} "
                             f"{edge_index.dtype}")
        n = None
        if size is not None:
            size = tuple(size)
            if len(size) != 2:
                raise ValueError(f"{layer}: size must be (num_nodes, num_nodes), got "
                                 f"{size!r}")
            for k, s in enumerate(size):
                if s is not None:
                    _core._check_num_nodes(s, f"size[{k}] (num_nodes)")
            if size[0] is not None and size[1] is not None and size[0] != size[1]:
                raise NotImplementedError(f"{layer}: size={size!r} (bipartite graphs) "
                                          f"is not supported by gnnc.MessagePassing")
            n = size[0] if size[0] is not None else size[1]
        for name, value in kwargs.items():
            if isinstance(value, (tuple, list)) and any(isinstance(v, Tensor) for v in value):
                # PyG's (source, target) pair: `name_j` reads value[0], `name_i`
                # value[1]; both must be node tensors of one graph, or one
                # side None (PyG's half pair, `x=(x, None)`: message gets
                # None for that side).
                rows = {v.size(0) if isinstance(v, Tensor) and v.dim() >= 1 else None
                        for v in value if v is not None}
                if len(value) != 2 or None in rows or len(rows) != 1 or \
                        (n is not None and rows != {n}):
                    shapes = ", ".join("None" if v is None else
                                       str(list(getattr(v, "shape", ()))) if
                                       isinstance(v, Tensor) else type(v).__name__
                                       for v in value)
                    raise NotImplementedError(
                        f"{layer}: {name} is a pair ({shapes}) whose tensors do not "
                        f"have the same number of rows (bipartite message passing, "
                        f"not supported by gnnc.MessagePassing) or are not node "
                        f"tensors; a pair of two [num_nodes, ...] tensors, or of one "
                        f"and None, is supported")
        if n is None:
            for stem in self._lifted_stems(kwargs):
                value = kwargs[stem]
                if isinstance(value, (tuple, list)) and value and value[0] is None:
                    value = value[-1]  # PyG's half pair (None, x_dst)
                else:
                    value = _pick(value, 0)
                if isinstance(value, Tensor) and value.dim() >= 1:
                    n = value.size(0)
                    break
        if n is None:
            n = int(edge_index.max()) + 1 if edge_index.numel() else 0
        return edge_index, n

    def _adjacency(self, layer, adj, size, kwargs):
        """PyG's sparse adjacency `adj_t` ([N, N], entry [i, j] the edge
        j -> i: a torch.sparse COO, CSR or CSC tensor or a
        torch_sparse.SparseTensor) as PyG's propagate reads it: its entries
        as they are (to_edge_index: a COO tensor's duplicates stay separate
        edges, whatever its is_coalesced() flag says), its values given to
        message as `edge_weight`, `edge_attr` (values of more than
        one dimension) and `edge_type` where those take them and the call
        passes none. (edge_index, size)."""
        from .nn import _common
        edge_index, values, (ns, nd) = _common.sparse_edges(
            layer, adj, self.flow, adj.device if isinstance(adj, Tensor) else adj.device(),
            duplicates="entries")
        if ns != nd:
            raise NotImplementedError(
                f"{layer}: a non-square adjacency [{nd}, {ns}] (bipartite message "
                f"passing) is not supported by gnnc.MessagePassing")
        if size is not None and tuple(size) not in ((ns, ns), (ns, None), (None, ns)):
            raise ValueError(f"{layer}: size={tuple(size)!r} but the adjacency is "
                             f"{nd} x {ns}")
        if values is not None:
            wanted = _param_names(self.message)
            given = {"edge_weight": values,
                     "edge_attr": values if values.dim() > 1 else None,
                     "edge_type": values}
            for name, value in given.items():
                if name in wanted and kwargs.get(name) is None and value is not None:
                    kwargs[name] = value
        return edge_index, (ns, ns)

    def _lifted_stems(self, kwargs):
        if torch.compiler.is_compiling():
            return _stems(self._message_params, kwargs)
        method = self.message
        key = (getattr(method, "__func__", method), tuple(kwargs))
        stems = _STEMS.get(key)
        if stems is None:
            stems = _STEMS[key] = _stems(_param_names(method), kwargs)
        return stems

    def _configuration(self, kwargs) -> tuple:
        """What decides whether a call traces: the inputs' shapes and types."""
        parts = []
        for name, v in sorted(kwargs.items()):
            if isinstance(v, Tensor):
                parts.append((name, v.dtype, v.device.type,
                              tuple(int(d) for d in v.shape[1:]), v.dim()))
            else:
                parts.append((name, type(v).__name__))
        return (self.training, tuple(parts))

    # -- the cache of traced calls ---------------------------------------------
    def _key(self, kwargs, n: int, e: int):
        """What the traced function and the way to find its tensors depend
        on (docs/Python-mp.md, "Tracing once per configuration"), or None
        (and the reason in ``_uncached``) when some of it cannot be told
        from outside message/update: then every call traces.

        Two parts: propagate's arguments, keyed on every call, and the
        layer's modules and methods (_ModulePart), keyed again only when
        their fingerprint changes."""
        try:
            part = _ModulePart.of(self)
            ids = {}
            kw = []
            for name, v in kwargs.items():
                kw.append(name)
                kw.append(_value_key(v, n, e, ids))
            # A keyword tensor that is also one of the layer's tensors.
            shared = part.tensor_index
            kw.append(tuple(map(shared.get, ids)) if shared else ())
        except _Uncacheable as why:
            self._mp.uncached = str(why)
            return None
        return (tuple(kw), part.key, int(n) if part.reads_sizes else None)

    def _origins(self, kwargs) -> dict:
        """id(tensor) -> recipe for the tensors a later call can find again:
        propagate's arguments (by keyword and position in a pair) and the
        parameters, buffers and tensor attributes of the layer's modules (by
        attribute path), as they are before message runs."""
        origins = {}
        for name, v in kwargs.items():
            if isinstance(v, Tensor):
                origins.setdefault(id(v), ("kw", name, None))
            elif isinstance(v, (tuple, list)):
                for k, t in enumerate(v):
                    if isinstance(t, Tensor):
                        origins.setdefault(id(t), ("kw", name, k))
        for path, t in _tensors_of(self, ()):
            origins.setdefault(id(t), ("attr", path))
        return origins

    def _replay(self, plan, edge_index, n, kwargs, graph):
        """A call of a configuration traced before: its tensors found by the
        recipes, no tracing."""
        masks = {}
        for r in plan.masks:
            _, seq, prob, domain, shape = r
            rows = n if domain == "node" else edge_index.size(1)
            masks[seq] = _draw_mask((rows,) + shape, prob, plan.dtype, plan.device)
        tensors = [find(self, kwargs, masks).contiguous() for find in plan.finders]
        self._mp.gnn_ir, self._mp.fn = plan.text, plan.fn
        self._mp.uncached = None
        return self._call_compiled(plan.fn, type(self).__name__, edge_index, n, tensors, graph,
                           plan.device)

    # -- the traced path -------------------------------------------------------
    def _run_traced(self, layer, edge_index, n, kwargs, key, graph):
        if type(self).aggregate is not MessagePassing.aggregate:
            raise TraceError(f"gnnc.MessagePassing: {layer} overrides aggregate, which "
                             f"is not traced (gnnc aggregates with aggr='sum', 'mean', "
                             f"'max', 'min', 'var', 'std' or a list of them); pass "
                             f"fallback=\"torch\" to run it unfused in PyTorch")
        flat = [t for v in kwargs.values()
                for t in (v if isinstance(v, (tuple, list)) else (v,))]
        floats = [v for v in flat if isinstance(v, Tensor) and v.is_floating_point()]
        if not floats:
            raise TraceError(f"gnnc.MessagePassing: {layer}.propagate got no floating "
                             f"tensor (node or edge features) to take the dtype from")
        dtype, device = floats[0].dtype, floats[0].device
        if dtype not in _DTYPES:
            raise TraceError(f"gnnc.MessagePassing: {layer}: features of dtype {dtype} "
                             f"(gnnc compiles float32 and float64)")
        if edge_index.device != device:
            raise ValueError(f"{layer}: edge_index is on {edge_index.device} but the "
                             f"features on {device}")
        e = edge_index.size(1)
        tracer = Tracer(layer, dtype, device, n, e, self.training)
        tracer.origins = self._origins(kwargs)
        with tracer:
            outs = [o.expr for o in self._trace(layer, tracer, edge_index, n, kwargs)]
            structure, leaves = _lower.structure(outs)
            entry = _COMPILED.get((layer, dtype, structure))
            if entry is None:
                entry = self._compile(layer, _DTYPES[dtype], outs, leaves)
                _COMPILED[(layer, dtype, structure)] = entry
        fn, text = entry
        self._mp.gnn_ir, self._mp.fn = text, fn
        missing = [leaf for leaf in leaves if id(leaf) not in tracer.tensors]
        if missing:
            raise RuntimeError(
                f"gnnc.MessagePassing: {layer}: internal error: the traced function "
                f"reads {len(missing)} value(s) the trace did not record "
                f"({', '.join(f'{m.op} {list(m.shape)}' for m in missing)}; "
                f"{len(leaves)} leaves, {len(tracer.tensors)} recorded)")
        recipes = [tracer.recipes.get(id(leaf)) for leaf in leaves]
        if key is not None and tracer.read_value is not None:
            # A number read from one of the layer's tensors (self.t.item(),
            # float(self.t), `if self.t > 0:`) is a constant of this trace:
            # the tensor may hold another value next time.
            file, line, where = tracer.read_value
            self._mp.uncached = (f"a Python value (item(), float(), bool(), ...) is "
                                 f"read from one of the layer's tensors at "
                                 f"{file}:{line} (in {where})")
            key = None
        elif key is not None and None in recipes:
            leaf = leaves[recipes.index(None)]
            file, line, where = leaf.loc
            self._mp.uncached = (f"a tensor {list(leaf.shape)} met at {file}:{line} (in "
                              f"{where}) is not an argument, parameter, buffer or "
                              f"tensor attribute of the layer")
            key = None
        if key is not None:
            _core._evict_oldest(self._plans, _PLANS_PER_LAYER)
            self._plans[key] = _Plan(fn, text, recipes, dtype, device)
            self._mp.uncached = None
        tensors = [tracer.tensors[id(leaf)].contiguous() for leaf in leaves]
        return self._call_compiled(fn, layer, edge_index, n, tensors, graph, device)

    def _call_compiled(self, fn, layer, edge_index, n, tensors, graph, device):
        if fn._forward is None and torch.is_grad_enabled() and \
                any(t.requires_grad for t in tensors):
            raise TraceError(f"gnnc.MessagePassing: {layer}: the compiler cannot "
                             f"differentiate the traced function: {fn._grad_error}; "
                             f"pass fallback=\"torch\" to run it unfused in PyTorch")
        if graph is None:
            graph = _core._handle(edge_index, n)
        try:
            out = fn._apply(edge_index, n, tensors, graph)
        except CompileError as err:  # e.g. a function that does not lower for the GPU
            hint = ""
            if any(t.dim() == 0 for t in tensors):
                # The CUDA backend's tensors have rows: a 0-d one (a scalar
                # Parameter, its gradient) has none.
                hint = ("a 0-d tensor (e.g. a scalar Parameter) is not supported "
                        "there: give it shape [1] (as PyG's GIN eps), or ")
            raise TraceError(f"gnnc.MessagePassing: {layer}: the traced function does "
                             f"not compile for {device}:\n{err}\n{hint}pass "
                             f"fallback=\"torch\" to run it unfused in PyTorch") from err
        # Several results: the aggregations of a list `aggr`, which PyG
        # concatenates along the last dimension (MultiAggregation's "cat").
        return torch.cat(out, dim=-1) if isinstance(out, tuple) else out

    def _compile(self, layer, dtype, outs, leaves):
        import gnnc
        try:
            module, name = _lower.build(layer, dtype, outs, leaves)
            text = module.text()
            fn = gnnc.compile(module, function=name)
        except CompileError as err:
            raise TraceError(f"gnnc.MessagePassing: {layer}: the traced function does "
                             f"not compile:\n{err}\npass fallback=\"torch\" to run it "
                             f"unfused in PyTorch") from err
        except ValueError as err:
            # gnnc.ir refusing what the trace built (a form the tracer lets
            # through but no op takes): the layer cannot be compiled as
            # written, which fallback="torch" answers.
            raise TraceError(f"gnnc.MessagePassing: {layer}: the traced function "
                             f"cannot be built: {err}; pass fallback=\"torch\" to run "
                             f"it unfused in PyTorch") from err
        return fn, text

    def _trace(self, layer, tracer, edge_index, n, kwargs):
        nodes = {}

        def node(stem, side=0):
            value = kwargs[stem]
            if isinstance(value, (tuple, list)):
                value = value[side]
                if value is None:
                    return None  # PyG's half pair: `x=(x, None)` gives x_i None
            else:
                side = 0
            leaf = nodes.get(id(value))
            if leaf is None:
                if not isinstance(value, Tensor) or not value.is_floating_point() or \
                        value.dim() < 1 or value.size(0) != n:
                    raise TraceError(
                        f"gnnc.MessagePassing: {layer}: {stem} is read per node "
                        f"({stem}_i/{stem}_j/update) but is not a floating tensor "
                        f"[num_nodes={n}, ...]: "
                        f"{getattr(value, 'shape', type(value).__name__)}")
                if value.dtype != tracer.dtype:
                    raise TraceError(f"gnnc.MessagePassing: {layer}: {stem} is "
                                     f"{value.dtype}, other features {tracer.dtype}")
                leaf = nodes[id(value)] = tracer.leaf(
                    "node_arg", value, "node",
                    ("kw", stem, side if isinstance(kwargs[stem], (tuple, list)) else None))
            return leaf

        edges = {}

        def plain(name, value):
            if isinstance(value, Tensor) and value.is_floating_point() and \
                    value.dim() >= 1 and value.size(0) == tracer.num_edges:
                leaf = edges.get(name)
                if leaf is None:
                    if value.dtype != tracer.dtype:
                        raise TraceError(f"gnnc.MessagePassing: {layer}: {name} is "
                                         f"{value.dtype}, other features {tracer.dtype}")
                    leaf = edges[name] = tracer.leaf("edge_arg", value, "edge",
                                                     ("kw", name, None))
                return Proxy(leaf)
            if isinstance(value, Tensor) and value.dim() >= 1 and \
                    value.size(0) == tracer.num_edges and \
                    not value.is_floating_point() and not value.is_complex():
                # A bool or integer edge tensor (an edge mask, x_j * mask):
                # PyTorch promotes it to the features' dtype where it meets
                # them, so it is passed as that dtype (no gradient).
                leaf = edges.get(name)
                if leaf is None:
                    recipe = ("call", Tensor.to, (("t", ("kw", name, None)),
                                                  ("v", tracer.dtype)), ())
                    leaf = edges[name] = tracer.leaf(
                        "edge_arg", value.to(tracer.dtype), "edge", recipe)
                    if value.dtype == torch.bool:
                        tracer.conditions.add(id(leaf))
                return Proxy(leaf)
            return value

        margs = {}
        halves = []  # message arguments that are None: a half pair's missing side
        for p in _params(self.message):
            name = p.name
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TraceError(f"gnnc.MessagePassing: {layer}.message takes "
                                 f"*args/**kwargs; name its arguments")
            if name[-2:] in ("_i", "_j") and name[:-2] in kwargs:
                dst = name[-2:] == "_i"
                leaf = node(name[:-2], int(dst))
                if leaf is None:
                    halves.append((name, name[:-2]))
                margs[name] = None if leaf is None else \
                    Proxy(leaf, "dst" if dst else "src")
            elif name in kwargs:
                margs[name] = plain(name, kwargs[name])
            else:
                margs[name] = _special_argument(layer, p, n, IndexProxy("dst"),
                                                IndexProxy("src"), EdgeIndexProxy)
        try:
            msg = _traced_call(self.message, margs)
        except TypeError as err:  # TraceError too
            if not halves:
                raise
            which = ", ".join(f"{a} (propagate got {s}=({s}_src, None))" if a[-2:] == "_i"
                              else f"{a} (propagate got {s}=(None, {s}_dst))"
                              for a, s in halves)
            raise TraceError(
                f"gnnc.MessagePassing: {layer}.message failed with {which} None, as "
                f"PyG passes it for the missing side of a half pair: use only the "
                f"side that was given, test for None, or pass both tensors "
                f"({err})") from err
        parts = _aggregations(_aggregators(layer, self.aggr), msg, _trace.aggregate)
        if len(parts) == 1:
            out = parts[0]
        elif type(self).update is MessagePassing.update:
            return parts  # concatenated after the call, of any rank
        else:
            if len(parts[0].expr.shape) != 2:
                _trace.fail(f"{layer}.update with aggr={self.aggr!r}", "is only traced "
                            "for 2-d messages [E, C] (the aggregations concatenated as "
                            "update's input); without update, any shape is")
            out = _trace.cat(parts, dim=-1)
        uparams = _params(self.update)
        uargs = {}
        for p in uparams[1:]:
            name = p.name
            if name in kwargs:
                v = kwargs[name]
                if isinstance(v, (tuple, list)) and len(v) == 2 and \
                        any(isinstance(t, Tensor) for t in v):
                    uargs[name] = tuple(None if t is None else Proxy(node(name, k))
                                        for k, t in enumerate(v))
                elif isinstance(v, Tensor) and v.is_floating_point() and \
                        v.dim() >= 1 and v.size(0) == n:
                    uargs[name] = Proxy(node(name))
                else:
                    uargs[name] = v
            elif name in ("size_i", "size_j", "dim_size"):
                uargs[name] = n
            elif p.default is not p.empty:
                uargs[name] = p.default
            else:
                raise TypeError(f"{layer}.update: required argument {name!r} was not "
                                f"passed to propagate")
        res = _traced_call(self.update, uargs, out)
        if not isinstance(res, Proxy) or res.kind != "node":
            _trace.fail(f"{layer}.update", f"returned {type(res).__name__}, not a "
                        f"node tensor computed from the aggregation")
        if res.expr.boolean:
            _trace.fail(f"{layer}.update", "returned a comparison")
        if len(parts) > 1:
            if res.expr is out.expr:
                return parts  # the concatenation itself: its parts, joined after the call
            _check_concatenation_use(layer, self.aggr, res.expr, out.expr)
        return [res]

    # -- the unfused path --------------------------------------------------------
    def _run_torch(self, edge_index, n, kwargs):
        """message, aggregation and update in plain PyTorch (fallback)."""
        layer = type(self).__name__
        src, dst = edge_index[0].long(), edge_index[1].long()
        margs = {}
        for p in _params(self.message):
            name = p.name
            if name[-2:] in ("_i", "_j") and name[:-2] in kwargs:
                x = _pick(kwargs[name[:-2]], int(name[-2:] == "_i"))
                margs[name] = x.index_select(0, dst if name[-2:] == "_i" else src) \
                    if isinstance(x, Tensor) else x
            elif name in kwargs:
                margs[name] = kwargs[name]
            else:
                margs[name] = _special_argument(layer, p, n, dst, src, lambda: edge_index)
        msg = self.message(**margs)
        out = self.aggregate(msg, dst, ptr=None, dim_size=n)
        uargs = {}
        for p in _params(self.update)[1:]:
            if p.name in kwargs:
                uargs[p.name] = kwargs[p.name]
            elif p.name in ("size_i", "size_j", "dim_size"):
                uargs[p.name] = n
            elif p.default is not p.empty:
                uargs[p.name] = p.default
            else:
                raise TypeError(f"{layer}.update: required argument {p.name!r} was not "
                                f"passed to propagate")
        return self.update(out, **uargs)


# -- the cache of traced calls -------------------------------------------------

class _Plan:
    """A traced configuration: its compiled function, printed IR and how to
    find the function's tensors on a call (one recipe per argument, see
    gnnc._trace)."""

    __slots__ = ("fn", "text", "recipes", "finders", "masks", "dtype", "device")

    def __init__(self, fn, text, recipes, dtype, device):
        self.fn, self.text, self.recipes = fn, text, recipes
        self.finders = [_finder(r) for r in recipes]
        self.dtype, self.device = dtype, device
        # Dropout masks are drawn in the order the trace drew them.
        self.masks = sorted((r for r in recipes if r[0] == "mask"), key=lambda r: r[1])


class _Status:
    """A layer's per-call bookkeeping: the IR of the last compiled call and
    why the last call traced (None: it was keyed), plus the fingerprints of
    its module configurations (_ModulePart)."""

    __slots__ = ("gnn_ir", "fn", "uncached", "parts")

    def __init__(self):
        self.gnn_ir = None
        self.fn = None  # its gnnc.Function (gnnc.explain)
        self.uncached = None
        self.parts = []  # _ModulePart, most recently used first


# Module configurations a layer remembers by fingerprint, oldest dropped
# first (PNA-like layers switch `aggr` between several within one forward).
_PARTS_PER_LAYER = 8
_MUTABLE = (list, dict, set)


class _ModulePart:
    """The part of a layer's key that describes its modules and methods:
    types, training flags, Python attributes by value, tensors by shape,
    dtype, device, layout, requires_grad and aliasing (_module_key), and
    message / update with their defaults, globals and captured variables
    (_function_key).

    Building it walks every attribute. A later call checks that it still
    holds with C-level comparisons only (_holds): the identities of every
    module's type, attributes, parameters, buffers and submodules, of
    message / update and of what they read, and the sizes of the tables
    they live in. The part holds the non-tensor objects those identities
    belong to, so none can be reused by a new object while it lives;
    tensors it holds weakly and checks for changes made in place (``.data
    =``, ``requires_grad_``, ``Module.to``); lists, dicts and sets (mutable
    in place) are compared by value."""

    __slots__ = ("key", "reads_sizes", "tensor_index", "modules", "whole", "getters",
                 "picked", "owners", "names", "sized", "lens", "absent", "ids", "objects",
                 "tensors", "meta", "containers")

    @staticmethod
    def of(layer) -> "_ModulePart":
        parts = layer._mp.parts
        for k, part in enumerate(parts):
            if part._holds():
                if k:
                    parts.insert(0, parts.pop(k))
                return part
        part = _ModulePart(layer)
        del parts[_PARTS_PER_LAYER - 1:]
        parts.insert(0, part)
        return part

    def __init__(self, layer):
        ids, key = {}, []
        _module_key(layer, key, ids)  # may raise _Uncacheable
        key.append(_function_key(layer.message))
        key.append(_function_key(layer.update))
        read = _class_values(layer)
        key.append(tuple((name, _constant(v, f"the class attribute "
                                             f"{type(layer).__name__}.{name}"))
                         for name, v in read))
        self.key = tuple(key)
        self.reads_sizes = any(p.name in ("size", "size_i", "size_j", "dim_size")
                               for p in _params(layer.message) + _params(layer.update))
        self.tensor_index = {id(t): ids[id(t)] for _, t in _tensors_of(layer, ())}
        # A later call checks the layer itself and the submodules message /
        # update can reach (all of them where that cannot be told).
        reach = _reached_submodules(layer)
        tensors = [t for _, t in _tensors_of(layer, (), reach)]
        self.tensors = tuple(weakref.ref(t) for t in tensors)
        self.meta = tuple(map(_META, tensors))

        # What the identities are read from: every module's type, its
        # parameter / buffer / submodule tables whole, its attributes that
        # are not Module's bookkeeping (``training`` included), and for
        # message / update the class attribute, defaults, captured cells
        # and the globals they name (those not defined then must stay so).
        modules, whole, getters, picked, owners, names, sized = [], [], [], [], [], [], []
        absent = []
        stack = [layer]
        while stack:
            m = stack.pop()
            modules.append(m)
            d = m.__dict__
            getters.append(_pick_keys([k for k in d if k not in _INTERNAL] + ["training"]))
            picked.append(d)
            tables = (m._parameters, m._buffers, m._modules)
            whole.extend(t for t in tables if t)  # an empty one: its size says all
            sized.append(d)
            sized.extend(tables)
            stack.extend(_submodules(m, reach if m is layer else None))
        cls = type(layer)
        for name in ("message", "update"):
            owners.append(cls)
            names.append(name)
            fn = getattr(getattr(layer, name), "__func__", None)
            if not isinstance(fn, types.FunctionType):
                continue
            owners.extend((fn, fn))
            names.extend(("__defaults__", "__kwdefaults__"))
            for c in fn.__closure__ or ():
                try:
                    c.cell_contents
                except ValueError:  # an empty cell
                    raise _Uncacheable(f"{fn.__qualname__} captures a variable that "
                                       f"has no value yet") from None
                owners.append(c)
                names.append("cell_contents")
            g = fn.__globals__
            globs = _global_names(fn.__code__)
            getters.append(_pick_keys([k for k in globs if k in g]))
            picked.append(g)
            absent.append((g.keys(), tuple(k for k in globs if k not in g)))
        for name, _ in read:  # class attributes message / update read
            owners.append(cls)
            names.append(name)
        self.modules, self.whole, self.getters, self.picked = modules, whole, getters, picked
        self.owners, self.names, self.sized = owners, names, sized
        self.absent = absent
        self.lens = tuple(map(len, sized))
        objects = list(self._objects())
        self.ids = tuple(map(id, objects))
        self.objects = [v for v in objects if not isinstance(v, Tensor)]
        valued = itertools.chain(_valued(layer, reach), (v for _, v in read))
        self.containers = [(v, _constant(v, "an attribute")) for v in valued
                           if isinstance(v, _MUTABLE + (tuple,)) and _holds_mutable(v)]

    def _objects(self):
        return itertools.chain(
            map(type, self.modules),
            itertools.chain.from_iterable(map(dict.values, self.whole)),
            itertools.chain.from_iterable(map(_call, self.getters, self.picked)),
            map(getattr, self.owners, self.names))

    def _holds(self) -> bool:
        """Whether the layer still looks as when this part was built."""
        try:
            if tuple(map(len, self.sized)) != self.lens or \
                    tuple(map(id, self._objects())) != self.ids or \
                    tuple(map(_META, map(_call, self.tensors))) != self.meta:
                return False
        except (KeyError, AttributeError, ValueError):
            # a key gone, a tensor freed, a captured variable deleted
            return False
        for keys, names in self.absent:
            if not keys.isdisjoint(names):
                return False
        for v, image in self.containers:
            try:
                if _constant(v, "an attribute") != image:
                    return False
            except _Uncacheable:
                return False
        return True


_call = getattr(operator, "call", None) or (lambda f, *args: f(*args))
_META = operator.attrgetter("shape", "dtype", "device", "layout", "requires_grad")


def _pick_keys(keys):
    """``table -> tuple of table[k]`` for ``keys``, in C."""
    if not keys:
        return lambda table: ()
    return operator.itemgetter(*keys, keys[0]) if len(keys) == 1 else \
        operator.itemgetter(*keys)


def _holds_mutable(v) -> bool:
    if isinstance(v, _MUTABLE):
        return True
    return isinstance(v, tuple) and any(_holds_mutable(x) for x in v)


def _valued(layer, reach=None):
    """The Python values the key holds by value: the modules' attributes
    (of the layer and the submodules in ``reach``, None: all) and message /
    update's defaults, globals and captured variables."""
    stack = [layer]
    while stack:
        m = stack.pop()
        yield from (v for k, v in m.__dict__.items() if k not in _INTERNAL)
        stack.extend(_submodules(m, reach if m is layer else None))
    for method in (layer.message, layer.update):
        yield from _function_values(getattr(method, "__func__", method))


def _function_values(fn) -> list:
    if not isinstance(fn, types.FunctionType):
        return []
    values = [fn.__defaults__, fn.__kwdefaults__]
    g = fn.__globals__
    values.extend(map(g.get, _global_names(fn.__code__), itertools.repeat(_MISSING)))
    for c in fn.__closure__ or ():
        try:
            values.append(c.cell_contents)
        except ValueError:  # an empty cell
            values.append(_MISSING)
    return values


class _Uncacheable(Exception):
    """Something the trace may depend on that the key cannot hold."""


# The attributes every torch.nn.Module has (hooks, registries) and
# MessagePassing's own bookkeeping: not the layer's configuration.
_INTERNAL = frozenset(torch.nn.Module().__dict__) | {
    "_failed", "_plans", "_mp", "_mp_id", "_message_params", "_tensor_names",
    "_value_names", "_class_reads", "_gnnc_function", "_gnnc_ran",  # of a gnnc.nn layer (gnnc.explain)
    "_gnnc_plan"}  # of a gnnc.nn layer (its last call's decisions, nn._plan)
_VALUES = (type(None), bool, int, str, bytes, complex, torch.dtype, torch.device,
           torch.layout)
_BY_IDENTITY = (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type,
                types.MethodType,
                types.MethodDescriptorType, types.WrapperDescriptorType)


def _constant(v, what):
    """A hashable image of the Python value ``v``: equal images, equal
    values as far as traced code can tell."""
    t = type(v)
    if t in _VALUES:
        return (t, v)
    if t is float:
        return (t, v.hex())
    if t in (tuple, list):
        return (t, tuple(_constant(x, what) for x in v))
    if t is dict:
        return (t, tuple((_constant(k, what), _constant(x, what)) for k, x in v.items()))
    if t in (set, frozenset):
        return (t, frozenset(_constant(x, what) for x in v))
    if isinstance(v, _BY_IDENTITY):
        return ("is", v)  # functions, classes, modules: immutable enough
    if isinstance(v, Tensor):
        raise _Uncacheable(f"{what} is a tensor outside the layer's modules")
    raise _Uncacheable(f"{what} is a {t.__name__} (only numbers, strings, None, "
                       f"tuples/lists/dicts of them, functions and tensors of the "
                       f"layer are keyed)")


def _tensor_key(t: Tensor, ids: dict, rows=None):
    """A tensor's part of the key: what the trace reads of it. ``rows`` =
    (N, E) for propagate's arguments, whose row count decides node / edge /
    dense; aliases are told apart by first occurrence."""
    alias = ids.setdefault(id(t), len(ids))
    shape, dtype, device, layout, requires_grad = _META(t)
    # Python ints and bools: under torch.compile with dynamic shapes the
    # sizes are SymInts (unhashable); the node and edge counts stay
    # symbolic (compared, not read), other sizes are specialised (guarded).
    head = tuple(shape)
    if rows is not None and head:
        r = head[0]
        head = (bool(r == rows[0]), bool(r == rows[1]),
                None if r in rows else int(r)) + tuple(int(d) for d in head[1:])
    else:
        head = tuple(int(d) for d in head)
    return (dtype, device, layout, head, len(shape), requires_grad, alias)


def _value_key(v, n: int, e: int, ids: dict):
    if isinstance(v, Tensor):
        return _tensor_key(v, ids, (n, e))
    if isinstance(v, (tuple, list)) and any(isinstance(x, Tensor) for x in v):
        return tuple(_value_key(x, n, e, ids) for x in v)
    return _constant(v, "an argument of propagate")


def _module_key(m: torch.nn.Module, parts: list, ids: dict) -> None:
    """The configuration of ``m`` and its submodules: type, training flag,
    Python attributes by value, parameters / buffers / tensor attributes by
    shape, dtype, device, requires_grad and aliasing."""
    parts.append(type(m))
    parts.append(m.training)
    for table in (m._parameters, m._buffers):
        for k, t in table.items():
            parts.append(k)
            parts.append(None if t is None else _tensor_key(t, ids))
    for k, v in m.__dict__.items():
        if k in _INTERNAL:
            continue
        parts.append(k)
        if isinstance(v, Tensor):
            parts.append(_tensor_key(v, ids))
        else:
            parts.append(_constant(v, f"{type(m).__name__}.{k}"))
    for k, sub in m._modules.items():
        parts.append(k)
        if sub is None:
            parts.append(None)
        else:
            _module_key(sub, parts, ids)


def _tensors_of(m: torch.nn.Module, path: tuple, reach=None):
    """(attribute path, tensor) of the parameters, buffers and tensor
    attributes of ``m`` and its submodules (those named in ``reach``, None:
    all)."""
    for table in (m._parameters, m._buffers):
        for k, t in table.items():
            if t is not None:
                yield path + (k,), t
    for k, v in m.__dict__.items():
        if isinstance(v, Tensor) and k not in _INTERNAL:
            yield path + (k,), v
    for k, sub in m._modules.items():
        if sub is not None and (reach is None or k in reach):
            yield from _tensors_of(sub, path + (k,))


def _submodules(m: torch.nn.Module, reach=None) -> list:
    """``m``'s submodules (those named in ``reach``, None: all)."""
    return [sub for k, sub in m._modules.items()
            if sub is not None and (reach is None or k in reach)]


# Names through which code reaches its caller's frame (``self`` without
# naming it): a message / update using one may read anything of the layer.
_FRAME_NAMES = frozenset({"super", "locals", "vars", "eval", "exec", "globals",
                          "_getframe", "currentframe", "getframeinfo", "stack"})


def _reached_submodules(layer):
    """The names of the layer's submodules that message / update can read,
    or None when that cannot be told (then a call checks all of them).

    Read from their bytecode: every use of ``self`` must be an attribute
    read, ``self.name``, of an instance attribute (a submodule, parameter,
    buffer or plain attribute, or nothing: an AttributeError); ``self`` may
    be captured by nested functions, which must follow the same rule. A
    method or property of the class (``self.helper()``), ``self`` passed
    on or rebound, ``super()`` and frame introspection: None. A submodule
    that only ``forward`` uses (GIN's ``nn``, TAGConv's ``lins``) is then
    neither walked nor checked on a call: message / update do not depend on
    it."""
    names = set()
    for method in (layer.message, layer.update):
        fn = getattr(method, "__func__", None)
        if not isinstance(fn, types.FunctionType) or getattr(method, "__self__", None) \
                is not layer or fn.__code__.co_argcount < 1:
            return None
        code = fn.__code__
        if not _self_reads(code, code.co_varnames[0], names):
            return None
    d, cls = layer.__dict__, type(layer)
    reach = set()
    for name in names:
        if name in layer._modules:
            reach.add(name)
        elif name in d or name in layer._parameters or name in layer._buffers:
            continue
        else:
            try:
                inspect.getattr_static(cls, name)
            except AttributeError:
                continue  # no such attribute: the trace raises
            return None  # of the class: a method, property or descriptor
    return frozenset(reach)


def _self_reads(code, me: str, names: set) -> bool:
    """Adds to ``names`` the attributes ``code`` reads on its variable ``me``
    (and nested code that captures it); False where ``me`` is used another
    way."""
    if _FRAME_NAMES.intersection(code.co_names) or "__class__" in code.co_freevars:
        return False
    ins = list(dis.get_instructions(code))
    for k, i in enumerate(ins):
        v = i.argval
        if v != me and not (isinstance(v, tuple) and me in v):
            continue
        if i.opname in ("MAKE_CELL", "COPY_FREE_VARS", "LOAD_CLOSURE"):
            continue
        if i.opname not in ("LOAD_FAST", "LOAD_DEREF", "LOAD_FAST_CHECK") or \
                k + 1 == len(ins) or ins[k + 1].opname not in ("LOAD_ATTR", "LOAD_METHOD"):
            return False
        names.add(ins[k + 1].argval)
    for c in code.co_consts:
        if isinstance(c, types.CodeType) and me in c.co_freevars and \
                not _self_reads(c, me, names):
            return False
    return True


_CONSTANTS = (type(None), bool, int, float, str)


def _guarded(layer) -> tuple:
    """An image of the layer's Python attributes, computed where dynamo
    traces strictly and passed to _run: dynamo guards what the trace reads
    where it does not look (numbers, strings, None, functions and classes as
    constants, lists and tuples item by item), so a changed attribute
    recompiles; and _run sets the attributes to these values while it
    traces, because dynamo applies an assignment made in the compiled
    forward (PNA's ``self.aggr = "max"`` between propagates) to the real
    layer only after the graph is traced. A dict changed in place, or an
    attribute of a submodule that is not a gnnc.MessagePassing, is not
    seen, nor a list or tuple assigned in the compiled forward
    (docs/Python-mp.md)."""
    config = []
    for name in layer._value_names:
        v = getattr(layer, name)
        config.append(_constant_image(v))
    # After them (_run_compiled reads only the first), the class attributes
    # message / update read: guarded, not set.
    cls = type(layer)
    for name in layer._class_reads:
        config.append(_constant_image(getattr(cls, name, None)))
    return tuple(config)


def _traceable_argument(v) -> bool:
    if isinstance(v, (Tensor, bool, int, float)):
        return True
    return isinstance(v, (tuple, list)) and all(_traceable_argument(x) for x in v)


def _constant_image(v):
    # Only ints, floats, bools and tuples of them may enter a nonstrict_trace
    # function (PyTorch 2.11): a tagged tuple, which _constant_value turns
    # back into the value (strings by their code points); functions, classes
    # and other objects by a test on them, which makes dynamo guard them.
    if isinstance(v, (bool, int, float)):
        return (0, v)
    if v is None:
        return (1,)
    if isinstance(v, str):
        return (2,) + tuple(ord(c) for c in v)
    if isinstance(v, (tuple, list)):
        return (3 if isinstance(v, tuple) else 4,) + tuple(_constant_image(x) for x in v)
    return (5, 1 if callable(v) else 2)


_NO_VALUE = object()


def _constant_value(image):
    """The number, string or None _constant_image made ``image`` of, else
    _NO_VALUE (containers are not swapped into the layer: dynamo tracks a
    list it has read, and one replaced under it breaks the graph)."""
    tag = image[0]
    if tag == 0:
        return image[1]
    if tag == 1:
        return None
    if tag == 2:
        return "".join(chr(c) for c in image[1:])
    return _NO_VALUE


def _compiled_tensors(m: torch.nn.Module, path: tuple):
    """_tensors_of where dynamo traces strictly (propagate under
    torch.compile): parameters and buffers of every module, and the plain
    tensor attributes of gnnc.MessagePassing modules by the names their
    ``__setattr__`` noted. A plain tensor attribute of another submodule is
    not found: register it as a buffer to use it in message / update under
    torch.compile (docs/Python-mp.md)."""
    for table in (m._parameters, m._buffers):
        for k, t in table.items():
            if t is not None:
                yield path + (k,), t
    if isinstance(m, MessagePassing):
        for k in m._tensor_names:
            yield path + (k,), getattr(m, k)
    for k, sub in m._modules.items():
        if sub is not None:
            yield from _compiled_tensors(sub, path + (k,))


_GLOBAL_NAMES = {}
_MISSING = ("missing",)


def _global_names(code) -> tuple:
    """The names ``code`` (and the functions, lambdas and comprehensions
    nested in it) may read as globals."""
    names = _GLOBAL_NAMES.get(code)
    if names is None:
        found, stack = set(), [code]
        while stack:
            c = stack.pop()
            found.update(c.co_names)
            stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        names = _GLOBAL_NAMES[code] = tuple(sorted(found))
    return names


_PLAIN = _VALUES + (float, tuple, list, dict, set, frozenset)


def _class_values(layer) -> tuple:
    """(name, value) of the plain class attributes (numbers, strings, None,
    containers of them; set on the layer's class or a base, not on the
    layer) that message / update may read through ``self``: the names their
    code reads that the layer does not hold itself. A value there is a
    constant of the trace, so the key holds it and a change is seen (an
    assignment to the class after a call). Methods, properties and other
    descriptors are not values: they are left out."""
    cls, d = type(layer), layer.__dict__
    own = (d, layer._parameters, layer._buffers, layer._modules)
    found = {}
    for name in ("message", "update"):
        fn = getattr(getattr(layer, name), "__func__", None)
        if not isinstance(fn, types.FunctionType):
            continue
        for k in _global_names(fn.__code__):
            if k in found or any(k in t for t in own):
                continue
            v = inspect.getattr_static(cls, k, _NO_VALUE)
            if v is not _NO_VALUE and type(v) in _PLAIN:
                found[k] = v
    return tuple(sorted(found.items()))


def _function_key(method):
    """message / update: the function, its defaults, the closure's values
    and the values of the globals it names."""
    fn = getattr(method, "__func__", method)
    if not isinstance(fn, types.FunctionType):
        return ("is", fn)
    what = f"{fn.__qualname__}"
    g = fn.__globals__
    glob = tuple(_constant(g[k], f"the global {k} of {what}") if k in g else _MISSING
                 for k in _global_names(fn.__code__))
    cells = []
    for c in fn.__closure__ or ():
        try:
            cells.append(_constant(c.cell_contents, f"a variable captured by {what}"))
        except ValueError:  # an empty cell
            cells.append(_MISSING)
    return (fn, _constant(fn.__defaults__, f"the defaults of {what}"),
            _constant(fn.__kwdefaults__, f"the defaults of {what}"), glob, tuple(cells))


def _resolve(layer, recipe, kwargs, masks):
    """The tensor a recipe of gnnc._trace names, on this call."""
    kind = recipe[0]
    if kind == "kw":
        v = kwargs[recipe[1]]
        return v if recipe[2] is None else v[recipe[2]]
    if kind == "attr":
        v = layer
        for a in recipe[1]:
            v = getattr(v, a)
        return v
    if kind == "mask":
        return masks[recipe[1]]
    if kind == "call":  # a torch op on the layer's tensors (_trace._LayerTensors)
        _, func, args, kw = recipe

        def arg(a):
            if a[0] == "t":
                return _resolve(layer, a[1], kwargs, masks)
            if a[0] == "seq":
                return a[1](arg(x) for x in a[2])
            return a[1]
        return func(*(arg(a) for a in args), **{k: arg(a) for k, a in kw})
    base = _resolve(layer, recipe[1], kwargs, masks)  # "derive"
    return base.t() if recipe[2] == "t" else base[recipe[3]:recipe[4]]


def _finder(recipe):
    """``(layer, kwargs, masks) -> tensor``: _resolve of ``recipe`` with the
    common kinds (a keyword, a pair's side, an attribute path) looked up
    without interpreting the recipe on every call."""
    kind = recipe[0]
    if kind == "kw":
        name, side = recipe[1], recipe[2]
        if side is None:
            return lambda layer, kwargs, masks: kwargs[name]
        return lambda layer, kwargs, masks: kwargs[name][side]
    if kind == "attr":
        get = operator.attrgetter(".".join(recipe[1]))
        return lambda layer, kwargs, masks: get(layer)
    return lambda layer, kwargs, masks: _resolve(layer, recipe, kwargs, masks)


def _draw_mask(shape, prob, dtype, device):
    return _trace.draw_mask(shape, prob, dtype, device)


# -- torch.compile ---------------------------------------------------------------
#
# Under torch.compile, propagate looks the graph's handle up where dynamo
# traces strictly, then calls _run with the layer's id and tensors
# (parameters, buffers, tensor attributes). _run is _run_compiled, marked
# torch.compiler.nonstrict_trace once dynamo loads (as gnnc.nn's
# _common._run): the trace (or the cached one) and gnnc.compile run as plain
# Python at trace time, with the layer's tensors replaced by the traced ones,
# so only gnnc's custom op lands in the graph and gradients reach the
# parameters.

_IDS = itertools.count()
_LAYERS = weakref.WeakValueDictionary()  # _mp_id -> layer


def _run_compiled(layer_id: int, training: bool, edge_index: Tensor, n, graph,
                  kwargs: dict, state: dict, config: tuple = (), nones: dict = None):
    from .nn._common import _concrete
    layer = _LAYERS[layer_id]
    # A number that changed between compiled calls comes back symbolic
    # (dynamo's automatic dynamic: a SymFloat for a float attribute or
    # keyword); the trace holds numbers as constants of the function, so it
    # takes the concrete value, which dynamo then guards (a new value
    # compiles again, as in eager mode). The tracer refused the SymFloat,
    # and dynamo reported that as an unsupported output of this function.
    kwargs = {k: v if isinstance(v, Tensor) else _concrete(v) for k, v in kwargs.items()}
    config = _concrete(config)
    kwargs = dict(kwargs, **dict.fromkeys(nones or (), None))
    saved = []
    try:
        # The attributes as the compiled forward has them at this call.
        d = layer.__dict__
        for name, image in zip(layer._value_names, config):
            value = _constant_value(image)
            if value is _NO_VALUE and image[0] in (3, 4) and name in d and \
                    _constant_image(d[name]) != image:
                raise RuntimeError(
                    f"gnnc.MessagePassing: {type(layer).__name__}.{name} (a "
                    f"{'tuple' if image[0] == 3 else 'list'}) was assigned inside the "
                    f"compiled forward; gnnc's trace would not see the new value. "
                    f"Assign it outside the torch.compile'd code, or use numbers / "
                    f"strings, which are seen")
            if value is not _NO_VALUE and name in d and d[name] is not value:
                saved.append((d, name, d[name]))
                d[name] = value
        for path, t in state.items():
            *owner, name = path.split(".")
            m = layer.get_submodule(".".join(owner))
            table = m._parameters if name in m._parameters else \
                m._buffers if name in m._buffers else m.__dict__
            saved.append((table, name, table[name]))
            table[name] = t
        return _eager(layer, edge_index, n, kwargs, graph)
    finally:
        for table, name, t in reversed(saved):
            table[name] = t


def _propagate_eagerly(layer, edge_index: Tensor, n, kwargs: dict, graph=None):
    return layer._propagate(edge_index, n, kwargs, graph)


# Once dynamo loads, _eager is _propagate_eagerly marked
# torch.compiler.disable: where dynamo runs propagate or _run eagerly
# (after a graph break), the tracer's frames must not become dynamo's
# (compiled in pieces, they would rebuild the traced expressions as new
# objects).
_run = _run_compiled
_eager = _propagate_eagerly
_hooked = False
# The frame hook dynamo has installed (None outside torch.compile's
# regions): where there is none, _eager's torch.compiler.disable has nothing
# to switch off and is skipped.
_frame_callback = getattr(getattr(getattr(torch._C, "_dynamo", None), "eval_frame", None),
                          "get_eval_frame_callback", None) or (lambda: True)


def _hook_dynamo() -> None:
    """Marks _run non-strict when dynamo loads (once, at the first layer)."""
    global _hooked
    if _hooked:
        return
    _hooked = True
    from .nn import _common

    def mark(decorators):
        global _run, _eager
        _run = decorators.nonstrict_trace(_run_compiled)
        _eager = decorators.disable(_propagate_eagerly)

    _common.when_dynamo_loads(mark)


def _check_concatenation_use(layer: str, aggr, root, cat) -> None:
    """The concatenated aggregations ``cat`` (update's aggr_out for a list
    ``aggr``) are traced as a matmul's input, which splits them (``[a, b]
    @ W = a @ W_a + b @ W_b``); an op of ``root``'s graph that still reads
    them gets the TraceError at its line."""
    stack, seen = [root], set()
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if any(a is cat for a in e.args):
            what = e.attrs[0] if e.op == "ew" and e.attrs else e.op
            _trace.fail(f"{layer}.update: {what} of aggr_out", f"is not traced: with "
                        f"aggr={aggr!r}, aggr_out is the aggregations side by side, "
                        f"which update may return or multiply (aggr_out @ W, a "
                        f"linear layer), not compute with elementwise", e.loc)
        stack.extend(e.args)


def _pyg_aggregation(a):
    """The gnnc name of PyG's Aggregation module ``a`` (its exact class at
    its defaults: a subclass may compute something else), the names of a
    MultiAggregation's parts (mode 'cat'), a PyG name ``a`` that gnnc does
    not aggregate with (``'mul'``, ``'softmax'``, ...) as ``False``, or
    None when ``a`` is neither a PyG aggregation nor one of its names."""
    try:
        from torch_geometric.nn import aggr as pyg_aggr
    except ImportError:
        return None
    if isinstance(a, str):
        known = {c.__name__.lower().removesuffix("aggregation")
                 for c in vars(pyg_aggr).values()
                 if isinstance(c, type) and issubclass(c, pyg_aggr.Aggregation)}
        return False if a.lower().replace("_", "") in known else None
    if not isinstance(a, pyg_aggr.Aggregation):
        return None
    plain = {pyg_aggr.SumAggregation: "sum", pyg_aggr.MeanAggregation: "mean",
             pyg_aggr.MaxAggregation: "max", pyg_aggr.MinAggregation: "min",
             pyg_aggr.VarAggregation: "var", pyg_aggr.StdAggregation: "std"}
    name = plain.get(type(a))
    if name is not None:
        return name if not getattr(a, "semi_grad", False) else False
    if type(a) is pyg_aggr.MultiAggregation and a.mode == "cat":
        parts = [_pyg_aggregation(p) for p in a.aggrs]
        return tuple(parts) if all(isinstance(p, str) for p in parts) else False
    return False


def _aggregators(who: str, aggr) -> tuple:
    """The aggregations ``aggr`` names (a name, PyG's Aggregation module of
    one gnnc has, or a list of them), as gnnc's names; NotImplementedError
    for PyG's others (``'mul'``, ``SoftmaxAggregation``, ...), else a
    ValueError."""
    given = tuple(aggr) if isinstance(aggr, (tuple, list)) else (aggr,)
    names = []
    for a in given:
        if isinstance(a, str) and a in _AGGRS:
            names.append(_AGGRS[a])
            continue
        pyg = _pyg_aggregation(a)
        if isinstance(pyg, (str, tuple)):
            names.extend((pyg,) if isinstance(pyg, str) else pyg)
            continue
        if pyg is False:
            raise NotImplementedError(
                f"{who}: aggr={a!r} (PyG's) is not supported: gnnc aggregates with "
                f"'sum' ('add'), 'mean', 'max', 'min', 'var', 'std' (names or PyG's "
                f"Aggregation modules of those at their defaults) or a list of them; "
                f"subclass torch_geometric.nn.MessagePassing for this one")
        names = []
        break
    if not names:
        raise ValueError(f"{who}: aggr must be one of 'sum' ('add'), 'mean', 'max', "
                         f"'min', 'var', 'std', or a non-empty list of them; got "
                         f"{aggr!r}")
    return tuple(names)


def _aggregations(names: tuple, msg, reduce) -> list:
    """Each aggregation of ``msg`` in ``names``, by ``reduce(values, how)``
    (how: sum, mean, max, min): var and std as PyG's VarAggregation and
    StdAggregation compute them, mean(m * m) - mean(m)^2, and its square
    root clamped below at 1e-5, 0 where that is <= sqrt(1e-5). A mean that
    several of them need is computed once."""
    means = {}

    def mean(key):
        if key not in means:
            means[key] = reduce(msg if key == "m" else msg * msg, "mean")
        return means[key]

    outs = []
    for how in names:
        if how in ("var", "std"):
            m = mean("m")
            out = mean("m2") - m * m
            if how == "std":
                out = out.clamp(min=1e-5).sqrt()
                out = out.masked_fill(out <= math.sqrt(1e-5), 0.0)
        elif how == "mean":
            out = mean("m")
        else:
            out = reduce(msg, how)
        outs.append(out)
    return outs


def _pick(value, side: int):
    """``value[side]`` of a (source, target) pair, else ``value``."""
    return value[side] if isinstance(value, (tuple, list)) else value


def _traced_call(method, kwargs, *args):
    """``method(*args, **kwargs)`` on proxies; a library's error on a proxy
    becomes a TraceError at the user's line."""
    try:
        return method(*args, **kwargs)
    except TraceError:
        raise
    except Exception as err:
        traced = _trace.library_error(err)
        if traced is None:
            raise
        raise traced from err


def _flip(edge_index: Tensor) -> Tensor:
    from .nn import _common
    return _common.flip(edge_index, "target_to_source")
