"""gnnc's PyTorch binding: graphs, compiled functions and their custom ops.

Every compiled function runs through one PyTorch custom op,
``torch.ops.gnnc.run(module, function, edge_index, num_nodes, inputs)``:

* its real implementation runs the function on the CPU reference evaluator
  (CPU tensors, float32 or float64) or as generated CUDA kernels (CUDA
  tensors) on PyTorch's current stream, into tensors PyTorch allocates;
* its fake implementation only computes result shapes, so ``torch.compile``
  traces it without compiling anything;
* its autograd formula runs ``@f_bwd``, the backward function the compiler
  derived from the same IR (``gnn-autodiff``), through
  ``torch.ops.gnnc.backward``: on CUDA tensors the runtime's training entry
  runs ``@f_fwd`` and ``@f_bwd`` as one compiled step, the backward reading
  its residuals where the forward left them (the saved tensors).

Graphs cross as ``edge_index`` tensors; the CSR/CSC structures built from
them are cached per tensor, so a graph used by several layers and epochs is
built once. Each lookup compares the tensor's contents with the copy the
structures were built from (``_Snapshot.matches``): a changed ``edge_index``
is rebuilt and checked, however it was written. A ``gnnc.Graph`` owns its
indices and skips that comparison.
"""

from __future__ import annotations

import errno
import hashlib
import operator
import os
import stat
import threading
import weakref
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Union

import torch

from . import _gnnc as _C
from . import _jit

CompileError = _C.CompileError

_DTYPES = {"float32": torch.float32, "float64": torch.float64}
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
    """

    def __init__(self, edge_index: torch.Tensor, num_nodes: int):
        _check_edge_index(edge_index)
        self.num_nodes = _check_num_nodes(num_nodes)
        # gnnc's own copy; writing to it is not supported (a write through
        # PyTorch ops is noticed by its version counter and rebuilds the
        # structures, one through .numpy() or .data is not).
        self.edge_index = _private_copy(edge_index)

    @staticmethod
    def from_edge_index(edge_index: torch.Tensor,
                        num_nodes: Optional[int] = None) -> "Graph":
        _check_edge_index(edge_index)
        if num_nodes is None:
            num_nodes = int(edge_index.max()) + 1 if edge_index.numel() else 0
        return Graph(edge_index, num_nodes)

    @property
    def num_edges(self) -> int:
        return self.edge_index.shape[1]

    @property
    def device(self) -> torch.device:
        return self.edge_index.device

    def statistics(self) -> dict:
        """Nodes, edges and degree statistics (computed on the graph's
        device; built and cached on first use)."""
        entry = _graphs.get(self.edge_index, self.num_nodes)
        return dict(entry.statistics)

    def __repr__(self) -> str:
        return (f"gnnc.Graph(num_nodes={self.num_nodes}, "
                f"num_edges={self.num_edges}, device={self.device})")


def _check_edge_index(edge_index) -> None:
    if not isinstance(edge_index, torch.Tensor):
        raise TypeError(
            f"gnnc: edge_index must be a torch.Tensor, got {type(edge_index).__name__}")
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


# Tensors only gnnc holds (a gnnc.Graph's copy of its indices, the graphs
# gnnc.nn derives): nothing outside gnnc writes them, so the caches trust
# their version counter and skip the contents check. id -> weak reference.
_PRIVATE: Dict[int, "weakref.ReferenceType"] = {}


def _make_private(t: torch.Tensor) -> torch.Tensor:
    key = id(t)

    def drop(ref, key=key):
        if _PRIVATE.get(key) is ref:
            del _PRIVATE[key]

    _PRIVATE[key] = weakref.ref(t, drop)
    return t


def _is_private(t: torch.Tensor) -> bool:
    ref = _PRIVATE.get(id(t))
    return ref is not None and ref() is t


def _private_copy(edge_index: torch.Tensor) -> torch.Tensor:
    """A contiguous int64 copy of ``edge_index`` that gnnc owns (never an
    alias: ``.to(int64).contiguous()`` returns the input itself when it is
    already contiguous int64)."""
    copy = torch.empty(edge_index.shape, dtype=torch.int64, device=edge_index.device)
    copy.copy_(edge_index)
    return _make_private(copy)


def _version_of(t: torch.Tensor) -> Optional[int]:
    """The version counter, or None for an inference tensor (made under
    torch.inference_mode(), which has none)."""
    return None if t.is_inference() else t._version


@dataclass
class _Snapshot:
    """What a cached structure was built from: a copy of the indices (None
    for a private tensor) and the tensor's version counter and data pointer."""
    copy: Optional[torch.Tensor]
    version: Optional[int]
    data_ptr: int

    @staticmethod
    def of(t: torch.Tensor) -> "_Snapshot":
        copy = None
        if not _is_private(t):
            copy = torch.empty(t.shape, dtype=t.dtype, device=t.device)
            copy.copy_(t)
        return _Snapshot(copy, _version_of(t), t.data_ptr())

    def matches(self, t: torch.Tensor) -> bool:
        """Whether ``t`` still holds the indices it held when this snapshot was
        taken. PyTorch's version counter misses writes through ``.numpy()``,
        ``.data``, DLPack or shared memory, so the contents are compared: on
        the CPU a memcmp of the 2 x E indices (``same_bytes``, without the GIL;
        a few milliseconds per million edges, about 1 % of a reference call:
        docs/Reliability.md#python-api);
        on CUDA ``torch.equal`` on the device, which reads its verdict back:
        one small device-to-host copy that waits for the current stream. This
        is the one place to make that check asynchronous later. Inside a CUDA
        graph capture (no synchronisation allowed) and for private tensors
        only the version counter and data pointer are compared."""
        if self.copy is None or (t.is_cuda and torch.cuda.is_current_stream_capturing()):
            return self.version == _version_of(t) and self.data_ptr == t.data_ptr()
        c = self.copy
        if t.shape != c.shape or t.dtype != c.dtype or t.device != c.device:
            return False
        if t.is_cuda or t.device.type != "cpu" or not t.is_contiguous():
            return torch.equal(c, t)
        return _C.same_bytes(c.data_ptr(), t.data_ptr(), c.numel() * c.element_size())


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


class _GraphCache:
    """Native graphs keyed by the edge_index tensor object and the node
    count, valid while the tensor holds the indices they were built from
    (_Snapshot.matches, checked on every lookup); dropped with the tensor."""

    def __init__(self):
        self._entries: Dict[int, _GraphEntry] = {}

    def get(self, edge_index: torch.Tensor, num_nodes: int) -> _GraphEntry:
        key = id(edge_index)
        with _LOCK:
            e = self._entries.get(key)
            if (e is not None and e.ref() is edge_index
                    and e.num_nodes == num_nodes
                    and e.snapshot.matches(edge_index)):
                return e
            # Built anew (and checked) from the tensor's present contents.
            e = self._build(edge_index, num_nodes)
            self._entries[key] = e
            return e

    def _build(self, edge_index: torch.Tensor, num_nodes: int) -> _GraphEntry:
        _check_edge_index(edge_index)
        num_nodes = _check_num_nodes(num_nodes)
        num_edges = edge_index.shape[1]
        snapshot = _Snapshot.of(edge_index)
        # The indices the structures are built from: the snapshot's copy (or
        # the private tensor itself), never the caller's tensor, so what was
        # checked is what is built.
        index = snapshot.copy if snapshot.copy is not None else edge_index
        if index.dtype != torch.int64 or not index.is_contiguous():
            index = index.to(torch.int64).contiguous()
        if num_edges:
            lo, hi = int(index.min()), int(index.max())
            if lo < 0 or hi >= num_nodes:
                bad = lo if lo < 0 else hi
                raise ValueError(
                    f"gnnc: edge_index holds node id {bad}, outside [0, {num_nodes}) "
                    f"for a graph of {num_nodes} nodes")
        key = id(edge_index)

        def drop(_ref, key=key, cache=self):
            with _LOCK:
                cur = cache._entries.get(key)
                if cur is not None and cur.ref() is None:
                    del cache._entries[key]

        entry = _GraphEntry(weakref.ref(edge_index, drop), snapshot, num_nodes)
        if index.is_cuda:
            _require_cuda()
            with torch.cuda.device(index.device):
                stream = torch.cuda.current_stream(index.device).cuda_stream
                entry.device = _C.DeviceGraph(index.data_ptr(),
                                              index.data_ptr() + 8 * num_edges,
                                              num_edges, num_nodes, stream)
            entry.index = index
            entry.statistics = entry.device.statistics()
        else:
            # The host graph copies the arrays.
            entry.host = _C.HostGraph.from_arrays(
                index.data_ptr(), index.data_ptr() + 8 * num_edges, num_edges,
                num_nodes)
            degree = torch.bincount(index[1], minlength=num_nodes) if num_edges else \
                torch.zeros(num_nodes, dtype=torch.int64)
            entry.statistics = {
                "nodes": num_nodes, "edges": num_edges,
                "mean_degree": num_edges / num_nodes if num_nodes else 0.0,
                "max_in_degree": int(degree.max()) if num_nodes else 0,
                "index_bits": 32 if num_edges < 2**31 - 1 else 64,
            }
        return entry


_graphs = _GraphCache()


def _require_cuda() -> None:
    if not _C.cuda_available():
        raise RuntimeError(f"gnnc: CUDA tensors need the CUDA runtime: {_C.cuda_error()}")


# --------------------------------------------------------------------------
# Compiled modules.


class _Compiled:
    """A parsed module and what was derived from it."""

    def __init__(self, key: str, source: str, name: str):
        self.key = key
        self.module = _C.Module.parse(source, name)
        # The user's functions (differentiation adds @f_fwd and @f_bwd).
        self.functions = list(self.module.functions())
        self.signatures: Dict[str, dict] = {}
        self.grad_info: Dict[str, dict] = {}
        self.grad_error: Dict[str, str] = {}
        # A derived forward function -> the function it differentiates.
        self.base_of: Dict[str, str] = {}
        self.cuda = _jit.Variants()
        self.training = _jit.Variants()

    def signature(self, function: str) -> dict:
        sig = self.signatures.get(function)
        if sig is None:
            sig = self.module.signature(function)
            self.signatures[function] = sig
        return sig

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

    def cuda_function(self, function: str, stats: dict, wait: bool = False):
        # Specialised per schedule key: graphs whose statistics lead to the
        # same default schedules share the compiled function. `wait`: this
        # key's own variant, even under GNNC_JIT=async.
        return self._specialised(self.cuda, _C.CudaFunction, function, stats,
                                 wait)

    def cuda_training(self, function: str, stats: dict):
        """The training step of ``function`` (differentiated by prepare())
        for graphs of these statistics."""
        return self._specialised(self.training, _C.CudaTraining, function, stats)

    def _specialised(self, cache: _jit.Variants, kind, function: str,
                     stats: dict, wait: bool = False):
        # Under GNNC_JIT=async a new schedule key runs on an already
        # compiled variant while its own compiles (_jit.py).
        bucket = (function, stats["schedule_key"], stats["csr_order"],
                  stats["index_bits"])
        fn = cache.ready.get(bucket)
        if fn is not None:
            return fn
        return cache.get(bucket, lambda: kind(self.module, function,
                                              stats["stats_option"],
                                              int(stats["index_bits"])),
                         wait=wait)


_modules: Dict[str, _Compiled] = {}


def _module(key: str) -> _Compiled:
    m = _modules.get(key)
    if m is None:
        raise RuntimeError(f"gnnc: no compiled module {key!r} in this process")
    return m


def _result_shapes(sig: dict, num_nodes, num_edges) -> List[Tuple[list, torch.dtype]]:
    out = []
    for r in sig["results"]:
        shape = list(r["shape"])
        if r["kind"] == "node":
            shape[0] = num_nodes
        elif r["kind"] == "edge":
            shape[0] = num_edges
        out.append((shape, _DTYPES[r["dtype"]]))
    return out


def _check_inputs(sig: dict, function: str, edge_index: torch.Tensor,
                  num_nodes: int, inputs: Sequence[torch.Tensor]) -> None:
    args = sig["args"][1:]
    if len(inputs) != len(args):
        raise TypeError(f"gnnc: @{function} takes a graph and {len(args)} tensors, "
                        f"got {len(inputs)} tensors")
    num_edges = edge_index.shape[1]
    for i, (t, a) in enumerate(zip(inputs, args)):
        what = f"gnnc: @{function} argument #{i + 1}"
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{what} must be a torch.Tensor, got {type(t).__name__}")
        want = _DTYPES.get(a["dtype"])
        if t.dtype != want:
            raise TypeError(f"{what} must be {want}, got {t.dtype}")
        shape = list(a["shape"])
        if a["kind"] == "node":
            shape[0] = num_nodes
        elif a["kind"] == "edge":
            shape[0] = num_edges
        if list(t.shape) != shape:
            rows = {"node": " (nodes first)", "edge": " (edges first)"}.get(a["kind"], "")
            raise ValueError(f"{what} must have shape {shape}{rows}, got {list(t.shape)}")
        if t.device != edge_index.device:
            raise ValueError(f"{what} is on {t.device}, the graph on {edge_index.device}")
        if not t.is_contiguous():
            raise ValueError(f"{what} must be contiguous (call .contiguous())")


def _check_results(what: str, tensors: Sequence[torch.Tensor],
                   expected: List[Tuple[list, torch.dtype]],
                   edge_index: torch.Tensor) -> None:
    """Tensors standing for results: their count, shapes, dtypes, device and
    layout (the kernels read them as they are)."""
    if len(tensors) != len(expected):
        raise TypeError(f"gnnc: expected {len(expected)} tensors for the "
                        f"{what}s, got {len(tensors)}")
    for k, (t, (shape, dtype)) in enumerate(zip(tensors, expected)):
        if (not isinstance(t, torch.Tensor) or list(t.shape) != shape
                or t.dtype != dtype or t.device != edge_index.device
                or not t.is_contiguous()):
            got = (f"{type(t).__name__}" if not isinstance(t, torch.Tensor) else
                   f"{list(t.shape)} {t.dtype} on {t.device}"
                   f"{'' if t.is_contiguous() else ', not contiguous'}")
            raise ValueError(f"gnnc: {what} #{k} must be a contiguous {dtype} "
                             f"tensor of shape {shape} on {edge_index.device}, "
                             f"got {got}")


# --------------------------------------------------------------------------
# The custom op.


@torch.library.custom_op("gnnc::run", mutates_args=())
def _run(module: str, function: str, edge_index: torch.Tensor, num_nodes: int,
         inputs: List[torch.Tensor]) -> List[torch.Tensor]:
    m = _module(module)
    sig = m.signature(function)
    _check_inputs(sig, function, edge_index, num_nodes, inputs)
    graph = _graphs.get(edge_index, num_nodes)
    outputs = [torch.empty(shape, dtype=dtype, device=edge_index.device)
               for shape, dtype in _result_shapes(sig, num_nodes, edge_index.shape[1])]
    if edge_index.is_cuda:
        _require_cuda()
        base = m.base_of.get(function)
        pointers = ([t.data_ptr() for t in inputs], [t.data_ptr() for t in outputs])
        if base is not None:
            # @f_fwd: the training step's forward (its backward reads what it
            # writes here, _run_backward).
            step = m.cuda_training(base, graph.statistics)
            _on_device(edge_index, step.forward_workspace_bytes, step.forward,
                       graph.device, *pointers)
        else:
            fn = m.cuda_function(function, graph.statistics)
            _on_device(edge_index, fn.workspace_bytes, fn.run, graph.device,
                       *pointers)
    else:
        m.module.run_reference(
            function, graph.host,
            _refs(inputs), _refs(outputs))
    return outputs


def _on_device(edge_index: torch.Tensor, workspace_bytes, run, graph, *pointers):
    """``run(graph, *pointers, workspace, stream)`` on PyTorch's current
    stream of the graph's device, with a workspace of
    ``workspace_bytes(graph)``."""
    with torch.cuda.device(edge_index.device):
        stream = torch.cuda.current_stream(edge_index.device).cuda_stream
        # Temporaries come from PyTorch's caching allocator (blocks are
        # 512-byte aligned) and return to it when the call is done.
        workspace = torch.empty(max(workspace_bytes(graph), 1), dtype=torch.uint8,
                                device=edge_index.device)
        run(graph, *pointers, workspace.data_ptr(), stream)


def _dtype_name(t: torch.Tensor) -> str:
    return "float32" if t.dtype == torch.float32 else "float64"


def _refs(tensors: Sequence[torch.Tensor]) -> list:
    return [_C.TensorRef(t.data_ptr(), list(t.shape), _dtype_name(t)) for t in tensors]


@_run.register_fake
def _run_fake(module, function, edge_index, num_nodes, inputs):
    sig = _module(module).signature(function)
    return [edge_index.new_empty(shape, dtype=dtype)
            for shape, dtype in _result_shapes(sig, num_nodes, edge_index.shape[1])]


def _setup_context(ctx, inputs, output):
    module, function, edge_index, num_nodes, tensors = inputs
    m = _module(module)
    ctx.module, ctx.function = module, function
    ctx.num_nodes = num_nodes
    ctx.num_tensors = len(tensors)
    base = m.base_of.get(function)
    ctx.base = base
    if base is None:
        ctx.save_for_backward(edge_index)
        return
    ctx.save_for_backward(edge_index, *tensors, *output)


def _backward(ctx, grads):
    if ctx.base is None:
        raise NotImplementedError(
            f"gnnc: @{ctx.function} has no derivative here (differentiate the "
            "function it came from; double backward is not supported)")
    m = _module(ctx.module)
    info = m.grad_info[ctx.base]
    saved = ctx.saved_tensors
    edge_index = saved[0]
    tensors = list(saved[1:1 + ctx.num_tensors])
    outputs = list(saved[1 + ctx.num_tensors:])
    sig = m.signature(ctx.base)
    dys = []
    for k, (shape, dtype) in enumerate(_result_shapes(sig, ctx.num_nodes,
                                                      edge_index.shape[1])):
        g = grads[k]
        dys.append(g.contiguous() if g is not None else
                   torch.zeros(shape, dtype=dtype, device=edge_index.device))
    dx = torch.ops.gnnc.backward(ctx.module, ctx.base, edge_index, ctx.num_nodes,
                                 tensors, outputs, dys)
    out: List[Optional[torch.Tensor]] = [None] * ctx.num_tensors
    for g, arg in zip(dx, info["grads"]):
        out[arg - 1] = g
    return None, None, None, None, out


_run.register_autograd(_backward, setup_context=_setup_context)


@torch.library.custom_op("gnnc::backward", mutates_args=())
def _run_backward(module: str, function: str, edge_index: torch.Tensor,
                  num_nodes: int, inputs: List[torch.Tensor],
                  outputs: List[torch.Tensor],
                  output_grads: List[torch.Tensor]) -> List[torch.Tensor]:
    """``@f_bwd`` of ``function`` after ``@f_fwd`` read ``inputs`` and wrote
    ``outputs`` (its results, then its own residuals), with the gradients of
    its results; returns the gradients of the differentiated arguments."""
    m = _module(module)
    info = m.grad_info.get(function)
    if info is None:
        raise ValueError(f"gnnc: @{function} was not differentiated")
    _check_inputs(m.signature(function), function, edge_index, num_nodes, inputs)
    num_edges = edge_index.shape[1]
    _check_results(f"@{info['forward']} output", outputs,
                   _result_shapes(m.signature(info["forward"]), num_nodes, num_edges),
                   edge_index)
    _check_results(f"@{function} output gradient", output_grads,
                   _result_shapes(m.signature(function), num_nodes, num_edges),
                   edge_index)
    graph = _graphs.get(edge_index, num_nodes)
    grads = [torch.empty(shape, dtype=dtype, device=edge_index.device)
             for shape, dtype in _result_shapes(m.signature(info["backward"]),
                                                num_nodes, edge_index.shape[1])]
    if edge_index.is_cuda:
        _require_cuda()
        step = m.cuda_training(function, graph.statistics)
        _on_device(edge_index, step.backward_workspace_bytes, step.backward,
                   graph.device, [t.data_ptr() for t in inputs],
                   [t.data_ptr() for t in outputs],
                   [t.data_ptr() for t in output_grads],
                   [t.data_ptr() for t in grads])
    else:
        # The reference evaluator takes @f_bwd's arguments in order: the
        # residuals (from the forward's arguments and outputs), then the
        # output gradients.
        residuals = [inputs[i - 1] if kind == "arg" else outputs[i]
                     for kind, i in info["residuals"]]
        m.module.run_reference(info["backward"], graph.host,
                               _refs(residuals + list(output_grads)), _refs(grads))
    return grads


@_run_backward.register_fake
def _run_backward_fake(module, function, edge_index, num_nodes, inputs, outputs,
                       output_grads):
    m = _module(module)
    sig = m.signature(m.grad_info[function]["backward"])
    return [edge_index.new_empty(shape, dtype=dtype)
            for shape, dtype in _result_shapes(sig, num_nodes, edge_index.shape[1])]


# --------------------------------------------------------------------------
# The user-facing callable.


class Function:
    """A compiled ``gnn`` function: ``fn(graph, *tensors)``.

    ``graph`` is a :class:`Graph` or an ``edge_index`` tensor (then pass
    ``num_nodes=``). Tensors follow the function's arguments after the
    ``!gnn.graph``: a dynamic leading size is the node count (or the edge
    count for ``{gnn.domain = "edge"}`` arguments), static sizes must match,
    the dtype must be the IR's (f32: ``torch.float32``, f64:
    ``torch.float64``), and all tensors live on the graph's device. Returns
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

    def __call__(self, graph: Union[Graph, torch.Tensor], *tensors: torch.Tensor,
                 num_nodes: Optional[int] = None):
        if isinstance(graph, Graph):
            edge_index = graph.edge_index
            n = graph.num_nodes if num_nodes is None else _check_num_nodes(num_nodes)
        else:
            _check_edge_index(graph)
            edge_index = graph
            if num_nodes is None:
                raise TypeError("gnnc: pass num_nodes= with an edge_index "
                                "(or a gnnc.Graph)")
            n = _check_num_nodes(num_nodes)
        _check_inputs(self.signature, self.function, edge_index, n, tensors)
        if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
            if self._forward is None:
                raise CompileError(self._grad_error)
            outs = torch.ops.gnnc.run(self._key, self._forward, edge_index, n,
                                      list(tensors))
            outs = outs[:self._results]
        else:
            outs = torch.ops.gnnc.run(self._key, self.function, edge_index, n,
                                      list(tensors))
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


class _SourceNotFound(CompileError, FileNotFoundError):
    """A ``.mlir`` path that names no file: both a :class:`CompileError` and
    a ``FileNotFoundError``."""


def _looks_like_path(source: str) -> bool:
    """The rule for a string given to :func:`compile`: one line that ends in
    ``.mlir`` or names an existing file is a path; anything else is IR text."""
    if "\n" in source or "\r" in source:
        return False
    return source.endswith(".mlir") or os.path.isfile(source)


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
    file is read as a path, anything else is parsed as IR (an
    ``os.PathLike`` is always a path). A path that names no file raises
    :class:`CompileError` (also a ``FileNotFoundError``) saying "no such
    file"; ``bytes`` raise ``TypeError``. IR that does not parse or verify
    raises :class:`CompileError` with located diagnostics. Compiling the same
    text again returns the cached module."""
    if path is not None:
        if source is not None:
            raise TypeError("gnnc.compile: give IR text or path=, not both")
        source, name = _read_source(path)
    elif isinstance(source, os.PathLike):
        source, name = _read_source(source)
    elif isinstance(source, (bytes, bytearray, memoryview)):
        raise TypeError(f"gnnc.compile: the source must be str (IR text, or a "
                        f"path), got {type(source).__name__}; decode bytes first "
                        f"(source.decode('utf-8')) or pass path=")
    elif not isinstance(source, str):
        raise TypeError(f"gnnc.compile: the source must be str (IR text, or a "
                        f"path) or path=, got {type(source).__name__}")
    elif _looks_like_path(source):
        source, name = _read_source(source)
    else:
        name = "<string>"
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
            compiled = _Compiled(key, source, name)
            _modules[key] = compiled
    if function is None:
        names = compiled.functions
        if len(names) != 1:
            raise ValueError(f"gnnc: {name} has {len(names)} public functions "
                             f"({', '.join(names) or 'none'}); pass function=")
        function = names[0]
    return Function(compiled, function)
