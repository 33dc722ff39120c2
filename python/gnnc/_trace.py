"""Tracing a message-passing layer's ``message`` and ``update`` into an
expression graph (for :class:`gnnc.MessagePassing`).

While a layer's methods run, the tensors they receive from ``propagate`` are
:class:`Proxy` objects. A proxy stands for one :class:`Expr`, a node of an
expression graph over the layer's inputs, and answers PyTorch's operators,
tensor methods and (through ``__torch_function__``) the functions of
``torch`` and ``torch.nn.functional`` that the subset below holds; anything
else raises :class:`TraceError` naming the op and the user's line.

A proxy has one of four kinds:

- ``node``: a node tensor ``[N, ...]`` (``update``'s arguments);
- ``src`` / ``dst``: the node tensor ``expr`` (``[N, ...]``) read on every
  edge at its source / destination (PyG's ``x_j`` / ``x_i``), i.e.
  ``gnn.gather`` of it, not yet materialised: work on proxies of one end
  (``x_j @ W``, ``(x_j * att).sum(-1)``) is done once per node, before the
  gather, and a message that is such a proxy is aggregated by ``gnn.spmm``;
- ``edge``: an edge tensor ``[E, ...]`` (edge arguments, values mixing both
  ends, softmax weights).

Plain tensors met on the way (parameters, values computed from them) are
dense arguments of the function: they are passed at call time, so gradients
reach them through autograd. Python numbers are constants.

:func:`gnnc._lower.structure` gives the key under which the compiled
function is cached, so a layer compiles once per configuration. Every leaf
also gets a *recipe* (:attr:`Tracer.recipes`): how to find its tensor again
on a later call without tracing (propagate's keyword, an attribute path on
the layer, a dropout mask to draw, a transpose or slice of one of those).
A leaf without a recipe (a tensor computed in ``message`` from a
parameter, a global tensor) makes the trace valid for this call only.
"""

import inspect
import math
import os
import sys
import threading
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = ["TraceError", "Proxy", "Expr", "Tracer", "IndexProxy", "current"]


class TraceError(TypeError):
    """A layer's ``message`` / ``update`` does something gnnc cannot trace
    into a ``gnn`` function: an op outside the subset, data-dependent
    control flow, an unsupported shape. The message names the op and the
    line; ``fallback="torch"`` runs such a layer unfused in PyTorch."""


_GNNC_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_LIBRARY_DIRS = [_GNNC_DIR, _TORCH_DIR]
try:  # PyG's utilities (its softmax) are library code too, when installed
    import importlib.util as _iu
    _spec = _iu.find_spec("torch_geometric")
    if _spec is not None and _spec.origin:
        _LIBRARY_DIRS.append(os.path.dirname(os.path.abspath(_spec.origin)) + os.sep)
except (ImportError, ValueError):  # pragma: no cover
    pass
_LIBRARY_DIRS = tuple(_LIBRARY_DIRS)
_TESTS_OF_GNNC = os.sep + "tests" + os.sep


def _is_library(filename: str) -> bool:
    return filename.startswith(_LIBRARY_DIRS) and _TESTS_OF_GNNC not in filename


def user_location() -> Tuple[str, int, str]:
    """(file, line, function) of the innermost frame outside gnnc, PyTorch
    and PyG: the user's line that made the current op."""
    frame = sys._getframe(1)
    while frame is not None and _is_library(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return ("<unknown>", 0, "?")
    return (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


def library_error(err: BaseException) -> Optional[TraceError]:
    """A TraceError for ``err`` when a library (PyTorch, PyG) raised it on a
    traced value (e.g. torch_geometric.utils.softmax asking the index for
    its size), located at the user's line that called into the library;
    None for errors of the user's own code or of gnnc."""
    frames = []
    tb = err.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    if not frames:
        return None
    deepest = frames[-1].f_code.co_filename
    if not _is_library(deepest) or deepest.startswith(_GNNC_DIR):
        return None
    user = None
    for k, frame in enumerate(frames):
        if not _is_library(frame.f_code.co_filename):
            user = (k, frame)
    if user is None:
        return None
    k, frame = user
    callee = frames[k + 1] if k + 1 < len(frames) else frames[-1]
    where = callee.f_code.co_filename
    what = callee.f_code.co_name
    loc = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
    if "torch_geometric" in where and where.endswith("_softmax.py"):
        what = "torch_geometric.utils.softmax"
    try:
        fail(what, f"raised {type(err).__name__}({err}) on a traced tensor", loc)
    except TraceError as e:
        return e
    return None


def _in_pyg_softmax() -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if "torch_geometric" in name and name.endswith("_softmax.py"):
            return True
        frame = frame.f_back
    return False


# --------------------------------------------------------------------------
# The tracer of the current call.

_STATE = threading.local()


def current() -> "Tracer":
    t = getattr(_STATE, "tracer", None)
    if t is None:
        raise TraceError("gnnc: a traced tensor was used after its layer's call "
                         "(keep only propagate's result)")
    return t


def fail(op: str, why: str, loc=None) -> None:
    """Raises the TraceError for ``op`` at the user's line."""
    file, line, fn = loc if loc is not None else user_location()
    tracer = getattr(_STATE, "tracer", None)
    layer = tracer.layer if tracer is not None else "the layer"
    hint = ""
    if _in_pyg_softmax() or op == "torch_geometric.utils.softmax":
        hint = (" (inside torch_geometric.utils.softmax: use gnnc.softmax(score, "
                "index), which traces to gnn.edge_softmax)")
    raise TraceError(
        f"gnnc.MessagePassing: {op} {why}{hint}, at {file}:{line} (in {fn}); "
        f"{layer} cannot be compiled as written: pass fallback=\"torch\" to run "
        f"its message/update unfused in PyTorch")


class Expr:
    """A node of the traced expression graph.

    ``op`` with hashable ``attrs`` over ``args`` (other Exprs); ``domain``
    is ``node`` (``[N, ...]``), ``edge`` (``[E, ...]``) or ``dense`` (a
    fixed shape); ``shape`` has None for the node or edge count. Leaves:
    ``node_arg``, ``edge_arg``, ``dense_arg``, ``mask_arg`` (a dropout
    mask), whose ``attrs`` say whether the tensor wants a gradient, and
    ``num`` (a constant). ``loc`` is the user's (file, line, function)."""

    __slots__ = ("op", "attrs", "args", "domain", "shape", "loc", "boolean", "__weakref__")

    def __init__(self, op, attrs, args, domain, shape, loc=None, boolean=False):
        self.op = op
        self.attrs = attrs
        self.args = tuple(args)
        self.domain = domain
        # Python ints (None: the node or edge rows): under torch.compile
        # with dynamic shapes a feature width is a SymInt; the function is
        # built for its value (torch.compile guards on it).
        self.shape = tuple(d if d is None or type(d) is int else int(d) for d in shape)
        self.loc = loc if loc is not None else user_location()
        self.boolean = boolean

    def __repr__(self):
        return f"Expr({self.op}, {self.attrs}, {_fmt(self.shape, self.domain)})"


def _fmt(shape, domain) -> str:
    rows = {"node": "N", "edge": "E"}.get(domain, "?")
    return "[" + ", ".join(rows if d is None else str(d) for d in shape) + "]"


class Tracer:
    """The state of one traced call: its leaves and the tensors they stand
    for, in the order they were met."""

    def __init__(self, layer: str, dtype: torch.dtype, device, num_nodes: int,
                 num_edges: int, training: bool):
        self.layer = layer
        self.dtype = dtype
        self.device = device
        self.num_nodes = num_nodes
        self.num_edges = num_edges
        self.training = training
        self.tensors: Dict[int, Tensor] = {}   # id(leaf) -> the tensor it stands for
        # id(tensor) -> how a later call finds it (see the module doc), for the
        # tensors reachable from propagate's arguments and the layer.
        self.origins: Dict[int, tuple] = {}
        self.recipes: Dict[int, Optional[tuple]] = {}  # id(leaf) -> recipe or None
        self.masks = 0                         # dropout masks drawn so far
        self._dense: Dict[int, Expr] = {}      # id(tensor) -> its dense leaf
        # id(tensor) -> (func, args) of the elementwise torch op on the
        # layer's tensors that made it (_LayerTensors): folded into the
        # function where the tensor meets traced code (dense()).
        self.calls: Dict[int, tuple] = {}
        self._gathers: Dict[Tuple[str, int], Expr] = {}
        self._keep = []                        # tensors whose id() keys a leaf
        # Where a Python value (item, float, bool, tolist, ...) was read from
        # one of the layer's tensors, the first such place (file, line,
        # function): the trace holds it as a constant, so it is not reused.
        self.read_value: Optional[Tuple[str, int, str]] = None
        # id(leaf) of the bool edge tensors given to propagate (edge masks),
        # passed as 0 / 1 in the features' dtype: torch.where takes them as
        # its condition (mask != 0).
        self.conditions = set()

    def __enter__(self):
        self._outer = getattr(_STATE, "tracer", None)
        _STATE.tracer = self
        self._mode = _LayerTensors(self)
        self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        self._mode.__exit__(*exc)
        _STATE.tracer = self._outer

    def leaf(self, op: str, tensor: Tensor, domain: str, recipe: tuple) -> Expr:
        shape = ((None,) + tuple(tensor.shape[1:])) if domain != "dense" else tuple(tensor.shape)
        e = Expr(op, (bool(tensor.requires_grad),), (), domain, shape,
                 ("<input>", 0, "propagate"))
        self.tensors[id(e)] = tensor
        self.recipes[id(e)] = recipe
        return e

    def derive(self, t: Tensor, op: str, *args) -> Tensor:
        """``t.t()`` (op "t") or ``t[a:b]`` ("slice"), computed by the tracer
        itself on a plain tensor; its recipe is ``t``'s and the op."""
        out = t.t() if op == "t" else t[args[0]:args[1]]
        base = self.origins.get(id(t))
        if base is not None:
            self.origins[id(out)] = ("derive", base, op) + args
        self._keep.append(out)
        return out

    def dense(self, t: Tensor, fold: bool = True) -> Expr:
        """The dense leaf of a plain tensor met in traced code; with
        ``fold``, a tensor an elementwise op made from the layer's tensors
        and numbers (``1 + self.eps``) is that op over their leaves instead,
        computed inside the kernel rather than by PyTorch on every call."""
        e = self._dense.get(id(t))
        if e is not None:
            return e
        if fold:
            e = self._folded(t)
            if e is not None:
                self._dense[id(t)] = e
                self._keep.append(t)
                return e
        if not t.is_floating_point() or t.is_complex():
            fail(f"a {t.dtype} tensor", "cannot be mixed with traced features "
                 "(only floating tensors of the features' dtype)")
        if t.dtype != self.dtype:
            fail(f"a {t.dtype} tensor", f"is mixed with {self.dtype} features "
                 f"(convert the layer or the inputs to one dtype)")
        if t.device != self.device:
            fail(f"a tensor on {t.device}", f"is mixed with features on {self.device}")
        e = Expr("dense_arg", (bool(t.requires_grad),), (), "dense", tuple(t.shape))
        self.tensors[id(e)] = t
        self.recipes[id(e)] = self.origins.get(id(t))
        self._dense[id(t)] = e
        self._keep.append(t)
        return e

    def _folded(self, t: Tensor) -> Optional[Expr]:
        call = self.calls.get(id(t))
        if call is None:
            return None
        func, args = call
        fn = _FOLDABLE.get(func)
        if fn is None:
            return None
        name, swap = fn
        if swap:
            args = (args[1], args[0]) + tuple(args[2:])
        operands = []
        for a in args:
            if isinstance(a, Tensor):
                if a.dtype != self.dtype or a.device != self.device or \
                        self.origins.get(id(a)) is None:
                    return None
                operands.append(self.dense(a))
            elif isinstance(a, (int, float)) and not isinstance(a, bool):
                operands.append(Expr("num", (float(a),), (), "dense", ()))
            else:
                return None
        if len(operands) != (1 if name in _FOLD_UNARY else 2):
            return None
        return Expr("ew", (name,), operands, "dense", tuple(t.shape))

    def gather(self, end: str, node: Expr) -> Expr:
        """``gnn.gather end`` of a node expression (one per pair)."""
        key = (end, id(node))
        e = self._gathers.get(key)
        if e is None:
            e = Expr("gather", (end,), (node,), "edge", node.shape, node.loc, node.boolean)
            self._gathers[key] = e
            self._keep.append(node)
        return e


class _LayerTensors(torch.overrides.TorchFunctionMode):
    """While a layer is traced: a torch op on the layer's own tensors (its
    parameters, buffers, tensor attributes, propagate's arguments: the
    tracer's origins) that no proxy takes part in, e.g. ``1 + self.eps`` in
    ``update`` or ``2 * self.w`` in ``message``, runs in PyTorch as written,
    and its result gets a recipe (``("call", func, args, kwargs)``) that a
    later call replays on that call's tensors. Without it such a tensor
    could not be found again and every call traced anew. Not recorded (the
    call traces every time, as before): in-place ops, and ops that also read
    a tensor of unknown origin."""

    def __init__(self, tracer: "Tracer"):
        super().__init__()
        self.tracer = tracer

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func in _VALUE_READS and self.tracer.read_value is None and args and \
                id(args[0]) in self.tracer.origins:
            self.tracer.read_value = user_location()
        if isinstance(out, Tensor) and not isinstance(out, Proxy):
            t = self.tracer
            recipe = _call_recipe(t, func, args, kwargs)
            if recipe is not None:
                t.origins[id(out)] = recipe
                t._keep.append(out)
                if func in _FOLDABLE and all(k == "inplace" and v is False
                                             for k, v in kwargs.items()):
                    t.calls[id(out)] = (func, args)
        return out


# Reading a Python value from a tensor: what the trace then holds as a
# constant (Tracer.read_value). Not len() or iteration: sizes, which the
# configuration's key already holds.
_VALUE_READS = frozenset(getattr(Tensor, n) for n in (
    "item", "tolist", "numpy", "__float__", "__int__", "__index__", "__bool__",
    "__complex__", "__format__") if hasattr(Tensor, n))

# The elementwise torch ops on the layer's tensors that Tracer.dense folds
# into the traced function: func -> (elementwise op, operands swapped).
_FOLD_UNARY = ("neg", "sigmoid", "exp", "tanh", "log", "sqrt", "rsqrt", "abs", "relu")
_FOLDABLE = {}
for _name, _funcs in (("add", (Tensor.add, torch.add)), ("sub", (Tensor.sub, torch.sub)),
                      ("mul", (Tensor.mul, torch.mul)), ("div", (Tensor.div, torch.div)),
                      ("max", (torch.maximum, Tensor.maximum)),
                      ("min", (torch.minimum, Tensor.minimum)),
                      ("neg", (Tensor.neg, torch.neg)),
                      ("sigmoid", (Tensor.sigmoid, torch.sigmoid)),
                      ("exp", (Tensor.exp, torch.exp)), ("tanh", (Tensor.tanh, torch.tanh)),
                      ("log", (Tensor.log, torch.log)), ("sqrt", (Tensor.sqrt, torch.sqrt)),
                      ("rsqrt", (Tensor.rsqrt, torch.rsqrt)), ("abs", (Tensor.abs, torch.abs)),
                      ("relu", (Tensor.relu, torch.relu, F.relu))):
    for _f in _funcs:
        _FOLDABLE[_f] = (_name, False)
for _f in (Tensor.__rsub__, Tensor.__rdiv__, Tensor.__rtruediv__):
    _FOLDABLE[_f] = ("sub" if _f is Tensor.__rsub__ else "div", True)


_LITERALS = (type(None), bool, int, float, str, torch.dtype, torch.device,
             torch.memory_format, torch.layout)


def _call_recipe(tracer: "Tracer", func, args, kwargs) -> Optional[tuple]:
    """``("call", func, args, kwargs)`` with each argument a recipe
    (``("t", recipe)``) or a literal (``("v", value)``), or None when the call
    cannot be replayed: no known tensor among its arguments, a tensor of
    unknown origin or another object among them, or an in-place op."""
    name = getattr(func, "__name__", "")
    if name.endswith("_") and not name.endswith("__"):
        return None
    known = [False]

    def arg(a):
        if isinstance(a, Tensor):
            r = tracer.origins.get(id(a))
            if r is None:
                raise _NoRecipe
            known[0] = True
            return ("t", r)
        if isinstance(a, (tuple, list)):
            return ("seq", type(a), tuple(arg(x) for x in a))
        if isinstance(a, _LITERALS):
            return ("v", a)
        raise _NoRecipe

    try:
        rargs = tuple(arg(a) for a in args)
        rkw = tuple((k, arg(v)) for k, v in kwargs.items())
    except _NoRecipe:
        return None
    return ("call", func, rargs, rkw) if known[0] else None


class _NoRecipe(Exception):
    pass


# --------------------------------------------------------------------------
# Proxies.

class _Rows:
    """The node or edge count in a proxy's shape: unknown while tracing.
    ``view``/``reshape`` take it as -1; anything else that needs its value
    is data-dependent."""

    __slots__ = ("what",)

    def __init__(self, what):
        self.what = what

    def _fail(self, *_):
        fail(f"the number of {self.what} (size(0))",
             "has no value while the layer is traced (pass -1 to view/reshape)")

    __int__ = __index__ = __float__ = __bool__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _fail
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = _fail
    __lt__ = __le__ = __gt__ = __ge__ = _fail

    def __repr__(self):
        return "E" if self.what == "edges" else "N"


class Shape(tuple):
    """A proxy's shape: dimension 0 is a :class:`_Rows`."""

    def numel(self):
        fail("numel()", "depends on the number of rows")


def _refuse_as_value(cls):
    """Python's operators on an edge index proxy raise the TraceError of an
    index used as a value, at the user's line. Without them ``==`` / ``!=``
    compared the proxies' identities: ``x_j * (edge_index_i !=
    edge_index_j)`` (PyG's self-loop mask) traced as ``x_j * True``."""
    def refuse(self, *args):
        fail("an edge index", "used as a value (only as gnnc.softmax's index)")
    for op in ("eq", "ne", "lt", "le", "gt", "ge", "bool", "len", "iter", "index",
               "int", "float", "neg", "pos", "abs", "invert", "add", "radd", "sub",
               "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv", "rfloordiv",
               "mod", "rmod", "pow", "rpow", "and", "rand", "or", "ror", "xor", "rxor",
               "matmul", "rmatmul"):
        if f"__{op}__" not in vars(cls):  # the class's own (EdgeIndexProxy's iter)
            setattr(cls, f"__{op}__", refuse)
    cls.__hash__ = object.__hash__
    return cls


@_refuse_as_value
class IndexProxy:
    """``edge_index[1]`` (``dst``) or ``edge_index[0]`` (``src``) in traced
    code: only an ``index`` argument of :func:`gnnc.softmax`."""

    def __init__(self, end: str):
        self.end = end

    def __getattr__(self, name):
        fail(f"edge_index[{1 if self.end == 'dst' else 0}].{name}",
             "is not supported in traced code (the index is only gnnc.softmax's "
             "index argument)")

    def __repr__(self):
        return f"IndexProxy({self.end})"


@_refuse_as_value
class EdgeIndexProxy:
    """The ``edge_index`` argument of a traced ``message``."""

    def __getitem__(self, k):
        if k in (0, -2):
            return IndexProxy("src")
        if k in (1, -1):
            return IndexProxy("dst")
        fail(f"edge_index[{k!r}]", "is not supported in traced code (only "
             "edge_index[0] and edge_index[1], as gnnc.softmax's index)")

    def __iter__(self):  # src, dst = edge_index
        return iter((IndexProxy("src"), IndexProxy("dst")))

    def __getattr__(self, name):
        fail(f"edge_index.{name}", "is not supported in traced code")


class Proxy:
    """A tensor of a traced ``message``/``update`` (see the module doc)."""

    # base: the proxy this one is a view of (view, reshape, unsqueeze, ...);
    # viewed: a view of this one was taken. An in-place operator on either
    # is refused: in PyTorch it would change the other too.
    __slots__ = ("expr", "end", "base", "viewed")
    __hash__ = object.__hash__  # comparisons build expressions

    def __init__(self, expr: Expr, end: Optional[str] = None):
        self.expr = expr
        self.end = end
        self.base = None
        self.viewed = False

    @property
    def kind(self) -> str:
        return self.end if self.end is not None else self.expr.domain

    # -- metadata ---------------------------------------------------------
    @property
    def shape(self) -> Shape:
        rows = _Rows("nodes" if self.kind == "node" else "edges")
        return Shape((rows,) + self.expr.shape[1:])

    def size(self, dim=None):
        s = self.shape
        if dim is None:
            return s
        return s[dim]

    def dim(self) -> int:
        return len(self.expr.shape)

    ndim = property(dim)

    @property
    def dtype(self):
        return current().dtype

    @property
    def device(self):
        return current().device

    @property
    def is_cuda(self):
        return current().device.type == "cuda"

    @property
    def requires_grad(self):
        return True

    def is_floating_point(self):
        return True

    def __repr__(self):
        rows = "node" if self.kind == "node" else "edge"
        return f"<gnnc traced tensor {self.kind} {_fmt(self.expr.shape, rows)}>"

    # -- data-dependent Python --------------------------------------------
    def __bool__(self):
        fail("bool() of a traced tensor", "(Python control flow on tensor "
             "values: if/while/and/or) depends on the data")

    def _no_value(self, *_):
        fail("a Python value of a traced tensor (int/float/len/iter/item)",
             "depends on the data")

    __int__ = __float__ = __index__ = __len__ = __iter__ = _no_value
    item = tolist = numpy = _no_value

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        fail(f"Tensor.{name}", "is not supported in traced code")

    def __getitem__(self, key):
        fail("indexing a traced tensor (x[...])", "is not supported in traced code")

    def __setitem__(self, key, value):
        fail("writing into a traced tensor (x[...] = v)", "is not supported in traced code")

    # -- operators --------------------------------------------------------
    def __add__(self, o): return ew("add", self, o)
    def __radd__(self, o): return ew("add", o, self)
    def __sub__(self, o): return ew("sub", self, o)
    def __rsub__(self, o): return ew("sub", o, self)
    def __mul__(self, o): return ew("mul", self, o)
    def __rmul__(self, o): return ew("mul", o, self)
    def __truediv__(self, o): return ew("div", self, o)
    def __rtruediv__(self, o): return ew("div", o, self)
    def __neg__(self): return ew("neg", self)
    def __abs__(self): return ew("abs", self)
    def __pos__(self): return self
    def __pow__(self, e): return power(self, e)
    def __matmul__(self, o): return matmul(self, o)

    def __rmatmul__(self, o):
        fail("matmul with the traced tensor on the right", "is not supported "
             "(write x @ W with the node/edge tensor on the left)")

    def _no_operator(symbol, why="is not supported in traced code"):
        def refuse(self, *_):
            fail(f"the operator {symbol} on a traced tensor", why)
        return refuse

    # Without these Python raised a bare TypeError, which fallback="torch"
    # did not catch.
    __and__ = __rand__ = _no_operator(
        "&", "is not supported in traced code (combine conditions with nested "
        "torch.where)")
    __or__ = __ror__ = _no_operator(
        "|", "is not supported in traced code (combine conditions with nested "
        "torch.where)")
    __xor__ = __rxor__ = _no_operator("^")
    __invert__ = _no_operator("~")
    __floordiv__ = __rfloordiv__ = _no_operator("//")
    __mod__ = __rmod__ = _no_operator("%")
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = _no_operator("<< / >>")
    __rpow__ = _no_operator("** with the traced tensor as the exponent")
    del _no_operator

    # Augmented assignment (x += y, ...) changes the tensor in place in
    # PyTorch, and every name bound to it sees the change: so here the proxy
    # object itself takes the new value. (Without these Python fell back to
    # x = x + y, and another name for the same tensor kept the old value.)
    def _in_place(symbol, make):
        def update(self, o):
            if self.base is not None or self.viewed:
                fail(f"the in-place operator {symbol} on a traced tensor that is a "
                     f"view of another or has one (view, reshape, unsqueeze, "
                     f"squeeze, flatten)", "is not supported in traced code (write "
                     "y = x " + symbol[:-1] + " ... instead)")
            out = make(self, o)
            if out.expr.shape != self.expr.shape:
                fail(f"the in-place operator {symbol}", f"would change the traced "
                     f"tensor's shape from {_fmt(self.expr.shape, self.kind)} to "
                     f"{_fmt(out.expr.shape, out.kind)} (PyTorch refuses it too)")
            self.expr, self.end = out.expr, out.end
            return self
        return update

    __iadd__ = _in_place("+=", lambda a, b: ew("add", a, b))
    __isub__ = _in_place("-=", lambda a, b: ew("sub", a, b))
    __imul__ = _in_place("*=", lambda a, b: ew("mul", a, b))
    __itruediv__ = _in_place("/=", lambda a, b: ew("div", a, b))
    __ipow__ = _in_place("**=", lambda a, b: power(a, b))
    del _in_place

    def __lt__(self, o): return ew("cmp", self, o, attrs=("olt",))
    def __le__(self, o): return ew("cmp", self, o, attrs=("ole",))
    def __gt__(self, o): return ew("cmp", self, o, attrs=("ogt",))
    def __ge__(self, o): return ew("cmp", self, o, attrs=("oge",))
    def __eq__(self, o): return ew("cmp", self, o, attrs=("oeq",))
    def __ne__(self, o): return ew("cmp", self, o, attrs=("une",))

    # -- tensor methods -----------------------------------------------------
    # (PyTorch's parameter names: x_j.mul(other=w), x.pow(exponent=2),
    # .sum(axis=-1) are PyTorch's spellings too; an argument none of these
    # take is a TraceError, _checked below.)
    def add(self, other, *, alpha=1):
        return ew("add", self, other if alpha == 1 else other * alpha)

    def sub(self, other, *, alpha=1):
        return ew("sub", self, other if alpha == 1 else other * alpha)

    def mul(self, other): return ew("mul", self, other)

    def div(self, other, *, rounding_mode=None):
        if rounding_mode is not None:
            fail(f"Tensor.div(rounding_mode={rounding_mode!r})", "is not supported in "
                 "traced code (a true division only)")
        return ew("div", self, other)

    def neg(self): return ew("neg", self)
    def exp(self): return ew("exp", self)
    def log(self): return ew("log", self)
    def sqrt(self): return ew("sqrt", self)
    def rsqrt(self): return ew("rsqrt", self)
    def tanh(self): return ew("tanh", self)
    def sigmoid(self): return ew("sigmoid", self)
    def abs(self): return ew("abs", self)
    def relu(self): return ew("relu", self)
    def reciprocal(self): return ew("div", 1.0, self)
    def pow(self, exponent): return power(self, exponent)
    def matmul(self, other): return matmul(self, other)
    def maximum(self, other): return ew("max", self, other)
    def minimum(self, other): return ew("min", self, other)

    def clamp(self, min=None, max=None):
        return clamp(self, min, max)

    def clamp_min(self, min): return clamp(self, min, None)
    def clamp_max(self, max): return clamp(self, None, max)

    def masked_fill(self, mask, value):
        return where(mask, value, self)

    def sum(self, dim=None, keepdim=False, *, dtype=None, axis=None):
        return reduce_dim(self, "sum", dim if axis is None else axis, keepdim, dtype)

    def mean(self, dim=None, keepdim=False, *, dtype=None, axis=None):
        return reduce_dim(self, "mean", dim if axis is None else axis, keepdim, dtype)

    def view(self, *shape): return reshape(self, shape, "view")
    def reshape(self, *shape): return reshape(self, shape, "reshape")

    def view_as(self, other):
        return reshape(self, tuple(other.shape), "view_as")

    def unsqueeze(self, dim): return unsqueeze(self, dim)
    def squeeze(self, dim=None): return squeeze(self, dim)

    def flatten(self, start_dim=0, end_dim=-1):
        return flatten(self, start_dim, end_dim)

    def contiguous(self, memory_format=None): return self

    def clone(self, memory_format=None): return Proxy(self.expr, self.end)

    def to(self, *args, **kwargs):
        target = kwargs.get("dtype")
        for a in args:
            if isinstance(a, torch.dtype):
                target = a
        if target is not None and target != current().dtype:
            fail(f"Tensor.to({target})", "changes the dtype in traced code")
        return self

    def type_as(self, other):
        if getattr(other, "dtype", None) != current().dtype:
            fail("Tensor.type_as", "changes the dtype in traced code")
        return self

    # -- torch functions ----------------------------------------------------
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        handler = _HANDLERS.get(func)
        if handler is None:
            fail(_name(func), "is not supported in traced code (gnnc.MessagePassing "
                 "traces elementwise arithmetic, exp/log/sqrt/rsqrt/tanh/sigmoid/abs, "
                 "relu/leaky_relu/elu/softplus, maximum/minimum, where, sum/mean over a "
                 "feature dim, view/unsqueeze, matmul/linear by a parameter, "
                 "gnnc.softmax)")
        return _bound(_name(func), handler, args, kwargs)


def _checked(name: str, fn):
    def method(self, *args, **kwargs):
        return _bound(f"Tensor.{name}", fn, (self,) + args, kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    return method


for _n in ("add", "sub", "mul", "div", "neg", "exp", "log", "sqrt", "rsqrt", "tanh",
           "sigmoid", "abs", "relu", "reciprocal", "pow", "matmul", "maximum", "minimum",
           "clamp", "clamp_min", "clamp_max", "masked_fill", "sum", "mean", "view",
           "reshape", "view_as", "unsqueeze", "squeeze", "flatten", "contiguous", "clone",
           "type_as"):
    setattr(Proxy, _n, _checked(_n, getattr(Proxy, _n)))
del _n


def _name(func) -> str:
    try:
        return torch.overrides.resolve_name(func) or repr(func)
    except Exception:  # pragma: no cover - resolve_name is best effort
        return getattr(func, "__qualname__", repr(func))


# --------------------------------------------------------------------------
# Building expressions.

def _operand(x, t: Tracer) -> Proxy:
    """An operand as a proxy: numbers become ``num`` leaves, plain tensors
    dense arguments."""
    if isinstance(x, Proxy):
        return x
    if isinstance(x, bool):
        return Proxy(Expr("num", (float(x),), (), "dense", ()), None)
    if isinstance(x, (int, float)):
        return Proxy(Expr("num", (float(x),), (), "dense", ()), None)
    if isinstance(x, Tensor):
        return Proxy(t.dense(x), None)
    if isinstance(x, (IndexProxy, EdgeIndexProxy)):
        fail("an edge index", "used as a value (only as gnnc.softmax's index)")
    fail(f"an operand of type {type(x).__name__}", "is not supported in traced code")


def _broadcast(op: str, shapes: List[tuple], ranks_of_rows: List[bool]):
    """torch's broadcasting of the operand shapes (the row dimension None
    only meets the row dimension or 1). Returns the result shape."""
    rows_rank = {len(s) for s, r in zip(shapes, ranks_of_rows) if r}
    if len(rows_rank) > 1:
        shown = ", ".join(_fmt(s, "edge") for s, r in zip(shapes, ranks_of_rows) if r)
        fail(op, f"broadcasts tensors of different ranks ({shown}); make the "
             f"ranks equal first (e.g. alpha.unsqueeze(-1) * x_j)")
    rank = max(len(s) for s in shapes)
    if rows_rank and rank > next(iter(rows_rank)):
        fail(op, f"broadcasts a parameter of rank {rank} against node/edge "
             f"tensors of rank {next(iter(rows_rank))} (it would add dimensions "
             f"before the rows)")
    out = []
    for k in range(rank):
        dims = [s[len(s) - rank + k] for s in shapes if len(s) - rank + k >= 0]
        if None in dims:
            bad = [d for d in dims if d is not None and d != 1]
            if bad:
                fail(op, f"broadcasts a dimension of size {bad[0]} against the "
                     f"rows (shapes {', '.join(_fmt(s, 'edge') for s in shapes)})")
            out.append(None)
            continue
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            fail(op, f"cannot broadcast shapes {', '.join(_fmt(s, 'edge') for s in shapes)}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _unify(op: str, proxies: List[Proxy], t: Tracer, on_edges: bool = False):
    """The level an op over ``proxies`` runs at: (exprs, domain, end).
    Proxies of one end stay on the nodes (the op runs before the gather),
    unless ``on_edges``; mixed ends and edge tensors run on the edges."""
    kinds = {p.kind for p in proxies if p.expr.domain != "dense"}
    if not kinds:
        fail(op, "has no traced tensor operand")
    if kinds == {"node"}:
        return [p.expr for p in proxies], "node", None
    if len(kinds) == 1 and kinds <= {"src", "dst"} and not on_edges:
        return [p.expr for p in proxies], "node", next(iter(kinds))
    if "node" in kinds:
        fail(op, "mixes node tensors with edge tensors")
    exprs = []
    for p in proxies:
        if p.end is not None:
            exprs.append(_gathered(t, p.end, p.expr))
        else:
            exprs.append(p.expr)
    return exprs, "edge", None


def _gathered(t: Tracer, end: str, e: Expr) -> Expr:
    """Node expression ``e`` of one end read on the edges. A comparison is
    made again on the edges from its gathered operands: a condition is no
    value a kernel stores (torch.where(x_i > 0, x_j, 0) compares at the
    edge)."""
    if not e.boolean:
        return t.gather(end, e)
    args = tuple(a if a.domain == "dense" else _gathered(t, end, a) for a in e.args)
    return Expr(e.op, e.attrs, args, "edge", e.shape, loc=e.loc, boolean=True)


_INFINITE_SLOPES = frozenset(("sqrt", "rsqrt", "log"))


def ew(fn: str, *operands, attrs=()) -> Proxy:
    """An elementwise op ``fn`` (with broadcasting) over proxies, plain
    tensors and numbers."""
    t = current()
    op = f"'{fn}'"
    ps = [_operand(x, t) for x in operands]
    for p in ps:
        if p.expr.boolean and fn not in ("where",):
            fail(op, "takes a comparison as a number (a comparison is only "
                 "torch.where's condition)")
    if fn == "where" and not ps[0].expr.boolean:
        fail("torch.where", "needs a comparison of traced tensors as its "
             "condition (e.g. torch.where(s > 0, s, 0.2 * s))")
    # An op whose derivative can be infinite at a finite input (sqrt at 0,
    # log at 0, a traced divisor at 0) runs on the edges, as PyG runs it: on
    # the nodes, a node no edge reads would get 0 * inf = NaN as its
    # gradient, where PyG's gives it 0.
    on_edges = fn in _INFINITE_SLOPES or (fn == "div" and ps[-1].expr.domain != "dense")
    exprs, domain, end = _unify(op, ps, t, on_edges)
    shape = _broadcast(op, [e.shape for e in exprs],
                       [e.domain != "dense" for e in exprs])
    e = Expr("ew", (fn,) + tuple(attrs), exprs, domain, shape, boolean=(fn == "cmp"))
    return Proxy(e, end)


def power(x, exponent) -> Proxy:
    if isinstance(exponent, bool) or not isinstance(exponent, (int, float)):
        fail("pow with a tensor exponent", "is not supported in traced code")
    e = float(exponent)
    if e == 1.0:
        return x
    if e == 2.0:
        return ew("mul", x, x)
    if e == 0.5:
        return ew("sqrt", x)
    if e == -0.5:
        return ew("rsqrt", x)
    if e == -1.0:
        return ew("div", 1.0, x)
    if e == 3.0:
        return ew("mul", ew("mul", x, x), x)
    fail(f"pow(x, {exponent})", "is not supported in traced code (exponents "
         "1, 2, 3, 0.5, -0.5, -1)")


def clamp(x, lo, hi) -> Proxy:
    for v in (lo, hi):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            fail("clamp with tensor bounds", "is not supported in traced code")
    out = x
    if lo is not None:
        out = ew("max", out, float(lo))
    if hi is not None:
        out = ew("min", out, float(hi))
    return out


def where(cond, a, b) -> Proxy:
    if not isinstance(cond, Proxy):
        fail("torch.where with a plain tensor condition", "is not supported in "
             "traced code (the condition must compare traced tensors)")
    if not cond.expr.boolean and _is_edge_mask(cond.expr):
        cond = ew("cmp", cond, 0.0, attrs=("une",))
    return ew("where", cond, a, b)


def _is_edge_mask(e: Expr) -> bool:
    """Whether ``e`` is a bool edge tensor of propagate (its 0 / 1 values),
    or a reshape of one."""
    while e.op == "reshape":
        e = e.args[0]
    return id(e) in current().conditions


def _axis(p: Proxy, dim, what: str) -> int:
    if isinstance(dim, bool) or not isinstance(dim, int):
        fail(what, f"takes one int dimension in traced code, got {dim!r}")
    rank = len(p.expr.shape)
    d = dim + rank if dim < 0 else dim
    if not 0 <= d < rank:
        fail(what, f"dimension {dim} is out of range for rank {rank}")
    return d


def reduce_dim(p: Proxy, kind: str, dim, keepdim: bool, dtype=None) -> Proxy:
    what = f"Tensor.{kind}"
    if dtype is not None and dtype != current().dtype:
        fail(f"{what}(dtype={dtype})", "changes the dtype in traced code")
    if dim is None:
        fail(f"{what}() over all elements", "sums over the rows (edges or nodes); "
             "reduce over a feature dimension (e.g. .sum(-1)), propagate "
             "aggregates over edges")
    if isinstance(dim, (tuple, list)):
        if len(dim) != 1:
            fail(f"{what} over several dimensions", "is not supported in traced "
                 "code (reduce one at a time)")
        dim = dim[0]
    d = _axis(p, dim, what)
    if d == 0:
        fail(f"{what}(dim=0)", "reduces over the rows (edges or nodes); propagate's "
             "aggregation does that")
    x = p.expr
    size = x.shape[d]
    shape = x.shape[:d] + x.shape[d + 1:]
    out = Proxy(Expr("sum", (d,), (x,), x.domain, shape), p.end)
    if kind == "mean":
        out = ew("mul", out, 1.0 / size) if size else out
    if keepdim:
        out = unsqueeze(out, d)
    return out


def _reshaped(p: Proxy, shape: tuple, what: str) -> Proxy:
    x = p.expr
    if shape == x.shape:
        return p
    old = x.shape[1:]
    new = shape[1:]
    if math.prod(old) != math.prod(new):
        fail(what, f"changes the row size from {_fmt(x.shape, x.domain)} to "
             f"{_fmt(shape, x.domain)}")
    out = Proxy(Expr("reshape", (shape,), (x,), x.domain, shape), p.end)
    root = p.base if p.base is not None else p
    out.base, root.viewed = root, True
    return out


def reshape(p: Proxy, shape, what: str) -> Proxy:
    what = f"Tensor.{what}"
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, torch.Size)):
        shape = tuple(shape[0])
    dims = []
    for k, d in enumerate(shape):
        if isinstance(d, _Rows) or d is None:
            d = -1
        if isinstance(d, bool) or not isinstance(d, int):
            fail(what, f"takes int sizes in traced code, got {d!r}")
        dims.append(d)
    if not dims or dims[0] != -1:
        fail(what, f"to {tuple(shape)}: the first dimension must stay the rows "
             f"(pass -1 or x.size(0) first, e.g. x.view(-1, heads, channels))")
    if -1 in dims[1:]:
        fail(what, "infers a feature dimension (-1 after the first); give the "
             "feature sizes")
    return _reshaped(p, (None,) + tuple(dims[1:]), what)


def unsqueeze(p: Proxy, dim) -> Proxy:
    rank = len(p.expr.shape)
    d = dim + rank + 1 if dim < 0 else dim
    if not 1 <= d <= rank:
        fail(f"Tensor.unsqueeze({dim})", "inserts a dimension before the rows")
    s = p.expr.shape
    return _reshaped(p, s[:d] + (1,) + s[d:], "Tensor.unsqueeze")


def squeeze(p: Proxy, dim=None) -> Proxy:
    s = p.expr.shape
    if dim is None:
        keep = (None,) + tuple(d for d in s[1:] if d != 1)
        return _reshaped(p, keep, "Tensor.squeeze")
    d = _axis(p, dim, "Tensor.squeeze")
    if d == 0:
        fail("Tensor.squeeze(0)", "would remove the rows")
    if s[d] != 1:
        return p
    return _reshaped(p, s[:d] + s[d + 1:], "Tensor.squeeze")


def flatten(p: Proxy, start_dim=0, end_dim=-1) -> Proxy:
    s = p.expr.shape
    a = _axis(p, start_dim, "Tensor.flatten")
    b = _axis(p, end_dim, "Tensor.flatten")
    if a == 0:
        fail("Tensor.flatten(0, ...)", "would merge the rows with the features "
             "(flatten from dimension 1)")
    if a >= b:
        return p
    merged = math.prod(s[a:b + 1])
    return _reshaped(p, s[:a] + (merged,) + s[b + 1:], "Tensor.flatten")


# -- matmul --------------------------------------------------------------------

def _push_matmul(p: Proxy, w: Tensor) -> Optional[Proxy]:
    """``p @ w`` through the linearity of matmul: an edge expression that
    adds, subtracts or negates (same-shape) proxies of both ends is
    multiplied per node first, ``(x_j - x_i) @ W = x_j @ W - x_i @ W``."""
    x = p.expr
    if x.op == "gather":
        return matmul(Proxy(x.args[0], x.attrs[0]), w)
    if x.op == "cat":
        return _cat_matmul(p, w)
    if x.op != "ew" or x.attrs[0] not in ("add", "sub", "neg"):
        return None
    if any(a.domain == "dense" or a.shape != x.shape for a in x.args):
        return None
    parts = [_as_proxy(a) for a in x.args]
    if x.attrs[0] == "neg":
        return ew("neg", matmul(parts[0], w))
    return ew(x.attrs[0], matmul(parts[0], w), matmul(parts[1], w))


def _as_proxy(e: Expr) -> Proxy:
    if e.op == "gather":
        return Proxy(e.args[0], e.attrs[0])
    return Proxy(e, None)


def _cat_matmul(p: Proxy, w: Tensor) -> Proxy:
    """``cat([a, b, ...], -1) @ W`` as ``a @ W[:Fa] + b @ W[Fa:Fa+Fb] + ...``
    (the slices of the plain tensor W are taken in PyTorch)."""
    parts = p.expr.attrs[1]
    out, start = None, 0
    for part in parts:
        width = part.expr.shape[-1]
        term = matmul(part, current().derive(w, "slice", start, start + width))
        out = term if out is None else ew("add", out, term)
        start += width
    return out


def matmul(p, w) -> Proxy:
    if not isinstance(p, Proxy):
        fail("matmul of a plain tensor by a traced one", "is not supported "
             "(write x @ W with the node/edge tensor on the left)")
    if isinstance(w, Proxy):
        fail("matmul of two traced tensors", "is not supported in traced code "
             "(only node/edge features times a parameter matrix)")
    if not isinstance(w, Tensor) or w.dim() != 2:
        fail("matmul", f"needs a parameter matrix [in, out] on the right, got "
             f"{getattr(w, 'shape', type(w).__name__)}")
    x = p.expr
    if len(x.shape) != 2 and x.op != "cat":
        fail("matmul", f"of a {_fmt(x.shape, x.domain)} tensor: only [rows, "
             f"features] @ [features, out] (view it as 2-d first)")
    if x.shape[-1] != w.shape[0]:
        fail("matmul", f"of {_fmt(x.shape, x.domain)} by {list(w.shape)}: the "
             f"inner sizes differ")
    if p.end is None and x.domain == "edge":
        pushed = _push_matmul(p, w)
        if pushed is not None:
            return pushed
    if x.op == "cat":
        return _cat_matmul(p, w)
    t = current()
    e = Expr("matmul", (), (x, t.dense(w, fold=False)), x.domain, (None, int(w.shape[1])))
    return Proxy(e, p.end)


def linear(p, weight, bias=None) -> Proxy:
    if isinstance(weight, Proxy) or isinstance(bias, Proxy):
        fail("torch.nn.functional.linear with a traced weight", "is not supported")
    out = matmul(p, current().derive(weight, "t"))
    if bias is not None:
        out = ew("add", out, bias)
    return out


def cat(tensors, dim=0) -> Proxy:
    tensors = list(tensors)
    if not tensors or not all(isinstance(x, Proxy) for x in tensors):
        fail("torch.cat of plain tensors with traced ones", "is not supported "
             "in traced code")
    rank = len(tensors[0].expr.shape)
    d = dim + rank if dim < 0 else dim
    if d != rank - 1 or rank != 2:
        fail(f"torch.cat(dim={dim})", "is only traced along the last dimension "
             "of 2-d tensors, as the input of a matmul or linear layer")
    exprs, domain, end = _unify("torch.cat", tensors, current())
    ps = [Proxy(e, end) for e in exprs]
    width = sum(e.shape[-1] for e in exprs)
    e = Expr("cat", ("cat", tuple(ps)), exprs, domain, (None, width))
    return Proxy(e, end)


def draw_mask(shape, prob: float, dtype, device) -> Tensor:
    """F.dropout's mask: bernoulli(1 - p) / (1 - p), zeros for p >= 1."""
    if prob >= 1.0:
        return torch.zeros(shape, dtype=dtype, device=device)
    mask = torch.empty(shape, dtype=dtype, device=device).bernoulli_(1.0 - prob)
    return mask.div_(1.0 - prob)


def dropout(input, p=0.5, training=True, inplace=False) -> Proxy:
    """F.dropout: the mask (bernoulli(1 - p) / (1 - p), drawn now) is an
    argument without gradient."""
    prob, p = p, input
    if inplace:
        fail("dropout(inplace=True)", "writes in place")
    if not training or prob == 0.0:
        return p
    t = current()
    if not isinstance(p, Proxy):
        fail("dropout of a plain tensor", "in traced code")
    shape = p.expr.shape
    rows = t.num_nodes if p.kind == "node" else t.num_edges
    full = (rows,) + tuple(shape[1:])
    mask = draw_mask(full, prob, t.dtype, t.device)
    domain = "node" if p.kind == "node" else "edge"
    leaf = Expr("mask_arg", (False,), (), domain, shape)
    t.tensors[id(leaf)] = mask
    t.recipes[id(leaf)] = ("mask", t.masks, float(prob), domain, tuple(shape[1:]))
    t.masks += 1
    t._keep.append(leaf)
    return ew("mul", p, Proxy(leaf, None))


def edge_softmax(score, index) -> Proxy:
    """gnnc.softmax on a traced score: ``gnn.edge_softmax`` over the edges
    that share ``index`` (edge_index[1]: the destination's incoming edges;
    edge_index[0]: the source's outgoing ones)."""
    if not isinstance(index, IndexProxy):
        fail("gnnc.softmax", "needs index = the message's `index` argument "
             "(edge_index[1], or edge_index[0]) in traced code")
    if not isinstance(score, Proxy):
        fail("gnnc.softmax of a plain tensor", "in traced code (the score must "
             "depend on the message's inputs)")
    t = current()
    x = score.expr if score.end is None else t.gather(score.end, score.expr)
    if x.boolean:
        fail("gnnc.softmax of a comparison", "is not a number")
    e = Expr("softmax", (index.end == "src",), (x,), "edge", x.shape)
    return Proxy(e, None)


# The handlers take exactly the arguments they honour: one they do not know
# raises (a TraceError: _bound), never is dropped. (torch.div's
# rounding_mode was dropped, and a floor division traced as a true one.)

def _unary(fn):
    def handler(input, *, out=None):
        if out is not None:
            fail(f"{fn}(out=...)", "writes in place")
        return ew(fn, input)
    return handler


def _binary(fn):
    def handler(input, other, *, out=None, alpha=1, rounding_mode=None):
        a, b = input, other
        if out is not None:
            fail(f"{fn}(out=...)", "writes in place")
        if rounding_mode is not None:
            fail(f"{fn}(rounding_mode={rounding_mode!r})", "is not supported in traced "
                 "code (a true division only)")
        if alpha != 1:
            if fn not in ("add", "sub"):
                fail(f"{fn}(alpha=...)", "is not an argument of it")
            b = ew("mul", b, alpha) if isinstance(b, Proxy) else b * alpha
        return ew(fn, a, b)
    return handler


def _relu(input, inplace=False):
    if inplace:
        fail("relu(inplace=True)", "writes in place")
    return ew("relu", input)


def _leaky_relu(input, negative_slope=0.01, inplace=False):
    if inplace:
        fail("leaky_relu(inplace=True)", "writes in place")
    return ew("leaky", input, attrs=(float(negative_slope),))


def _elu(input, alpha=1.0, inplace=False):
    if inplace:
        fail("elu(inplace=True)", "writes in place")
    return ew("elu", input, attrs=(float(alpha),))


def _softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta x)) / beta`` in the form that cannot overflow,
    ``max(z, 0) + log(1 + exp(-|z|))`` with ``z = beta x``. PyTorch returns
    ``x`` where ``z > threshold``: at the default 20 this form differs from
    ``x`` there by less than ``exp(-20)`` relative (below float32's
    precision), so no select is traced; another threshold is traced as
    PyTorch's select (a threshold of 0.5 moved the result by 1.7)."""
    z = ew("mul", input, float(beta)) if beta != 1 else input
    tail = ew("log", ew("add", 1.0, ew("exp", ew("neg", ew("abs", z)))))
    out = ew("add", ew("max", z, 0.0), tail)
    out = ew("div", out, float(beta)) if beta != 1 else out
    if float(threshold) != 20.0:
        out = ew("where", ew("cmp", z, float(threshold), attrs=("ogt",)), input, out)
    return out


def _method(name):
    def handler(self, *args, **kwargs):
        if not isinstance(self, Proxy):
            fail(f"Tensor.{name} of a plain tensor with a traced argument",
                 "is not supported in traced code")
        return getattr(self, name)(*args, **kwargs)
    return handler


def _cmp(pred):
    def handler(a, b, *, out=None):
        if out is not None:
            fail("a comparison with out=...", "writes in place")
        return ew("cmp", a, b, attrs=(pred,))
    return handler


def _bound(what: str, fn, args, kwargs):
    """``fn(*args, **kwargs)`` where they bind to its parameters, else the
    TraceError naming ``what`` and PyTorch's spelling that gnnc does not
    take (a Python TypeError there named no op or line, and
    fallback="torch" did not catch it)."""
    try:
        sig = _SIGNATURES.get(fn)
        if sig is None:
            sig = _SIGNATURES[fn] = inspect.signature(fn)
        sig.bind(*args, **kwargs)
    except TypeError as e:
        fail(f"{what} with these arguments", f"is not supported in traced code ({e})")
    return fn(*args, **kwargs)


_SIGNATURES: dict = {}


_HANDLERS = {}


def _register():
    h = _HANDLERS
    for fn in ("exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "abs", "neg"):
        h[getattr(torch, fn)] = _unary(fn)
    h[torch.negative] = _unary("neg")
    for name, fn in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("div", "div"),
                     ("subtract", "sub"), ("multiply", "mul"), ("divide", "div"),
                     ("true_divide", "div"), ("maximum", "max"), ("minimum", "min")):
        h[getattr(torch, name)] = _binary(fn)
    h[torch.relu] = _relu
    h[F.relu] = _relu
    h[F.leaky_relu] = _leaky_relu
    h[F.elu] = _elu
    h[F.softplus] = _softplus
    h[torch.sigmoid] = _unary("sigmoid")
    h[torch.tanh] = _unary("tanh")
    h[torch.where] = lambda condition, input, other: where(condition, input, other)
    h[torch.clamp] = lambda input, min=None, max=None: clamp(input, min, max)
    h[torch.clamp_min] = lambda input, min: clamp(input, min, None)
    h[torch.matmul] = lambda input, other, out=None: matmul(input, other)
    h[torch.mm] = lambda input, mat2, out=None: matmul(input, mat2)
    h[F.linear] = linear
    h[torch.cat] = cat
    h[torch.concat] = cat
    h[torch.sum] = lambda input, dim=None, keepdim=False, dtype=None: \
        reduce_dim(input, "sum", dim, keepdim, dtype)
    h[torch.mean] = lambda input, dim=None, keepdim=False, dtype=None: \
        reduce_dim(input, "mean", dim, keepdim, dtype)
    h[torch.unsqueeze] = lambda input, dim: unsqueeze(input, dim)
    h[torch.squeeze] = lambda input, dim=None: squeeze(input, dim)
    h[torch.reshape] = lambda input, shape: reshape(input, tuple(shape), "reshape")
    h[torch.flatten] = lambda input, start_dim=0, end_dim=-1: flatten(input, start_dim, end_dim)
    h[F.dropout] = dropout
    h[torch.pow] = lambda input, exponent: power(input, exponent)
    for pred, names in (("olt", ("lt", "less")), ("ole", ("le", "less_equal")),
                        ("ogt", ("gt", "greater")), ("oge", ("ge", "greater_equal")),
                        ("oeq", ("eq",)), ("une", ("ne", "not_equal"))):
        for n in names:
            h[getattr(torch, n)] = _cmp(pred)
    # Tensor methods and operators called on a plain tensor with a proxy
    # argument (W * x_j, bias + h): the proxy's reflected operator.
    T = torch.Tensor
    for dunder, fn in (("__add__", "add"), ("__radd__", "add"), ("__sub__", "sub"),
                       ("__rsub__", "rsub"), ("__mul__", "mul"), ("__rmul__", "mul"),
                       ("__truediv__", "div"), ("__rtruediv__", "rdiv"),
                       ("__div__", "div"), ("__rdiv__", "rdiv"),
                       ("add", "add"), ("sub", "sub"), ("mul", "mul"), ("div", "div")):
        if not hasattr(T, dunder):
            continue
        if fn == "rsub":
            h[getattr(T, dunder)] = lambda a, b: ew("sub", b, a)
        elif fn == "rdiv":
            h[getattr(T, dunder)] = lambda a, b: ew("div", b, a)
        else:
            h[getattr(T, dunder)] = _binary(fn)
    for dunder, pred in (("__lt__", "olt"), ("__le__", "ole"), ("__gt__", "ogt"),
                         ("__ge__", "oge"), ("__eq__", "oeq"), ("__ne__", "une")):
        h[getattr(T, dunder)] = _cmp(pred)
    h[T.__matmul__] = lambda a, b: matmul(a, b)
    h[T.maximum] = _binary("max")
    h[T.minimum] = _binary("min")
    for name in ("exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "abs", "relu",
                 "sum", "mean", "view", "reshape", "unsqueeze", "squeeze", "flatten",
                 "matmul", "clamp", "masked_fill", "pow", "neg"):
        h[getattr(T, name)] = _method(name)


_register()


# --------------------------------------------------------------------------
# Aggregation.

def _factors(e: Expr) -> List[Expr]:
    """The factors of a product tree on the edges (in any association)."""
    if e.op == "ew" and e.attrs[0] == "mul" and e.domain == "edge" and len(e.args) == 2:
        return _factors(e.args[0]) + _factors(e.args[1])
    return [e]


def _product(parts: List[Proxy]) -> Proxy:
    out = parts[0]
    for p in parts[1:]:
        out = ew("mul", out, p)
    return out


def _weights_of(m: Expr):
    """(x, w) when the edge message ``m`` is a product of source features
    and one weight per edge (and head), in any order and association:
    ``w_ji * x_j``, ``norm_j * norm_i * x_j``, ``alpha.unsqueeze(-1) * (x_j
    @ W)``. The factors read at the source (and parameters, numbers) make
    ``x`` on the nodes; the others, each with a last dimension of 1 (edge
    tensors, destination values), make ``w``. Then ``gnn.spmm(x,
    weights=w)`` aggregates the message without an edge-sized temporary of
    features."""
    factors = _factors(m)
    if len(factors) < 2 or len(m.shape) < 2:
        return None
    node, weight = [], []
    for f in factors:
        if f.boolean:
            return None
        if f.op == "gather" and f.attrs[0] == "src" or f.domain == "dense":
            node.append(_as_proxy(f))
        elif len(f.shape) == len(m.shape) and f.shape[-1] == 1:
            weight.append(_as_proxy(f))
        else:
            return None
    if not weight or not any(p.kind == "src" for p in node):
        return None
    x = _product(node)
    if x.kind != "src" or x.expr.shape != m.shape:
        return None
    w = _product(weight)
    target = m.shape[:-1]
    if w.expr.shape[:-1] != target:
        return None
    t = current()
    we = w.expr if w.end is None else t.gather(w.end, w.expr)
    if we.op == "reshape" and we.args[0].shape == target:
        weights = we.args[0]
    else:
        weights = Expr("reshape", (target,), (we,), "edge", target, we.loc)
    return x.expr, weights


def aggregate(msg, aggr: str) -> Proxy:
    """``aggr`` of the message over every node's incoming edges, as a node
    proxy: ``gnn.spmm`` for a message of source features (optionally times
    one weight per edge and head), ``gnn.reduce`` of the edge values
    otherwise. Reshapes at the end of the message happen after the
    aggregation (they act within a row)."""
    if not isinstance(msg, Proxy):
        fail("message", f"returned {type(msg).__name__}, not a tensor computed "
             f"from its inputs")
    if msg.expr.boolean:
        fail("message", "returned a comparison, not a number")
    t = current()
    reshapes = []
    if msg.end is None:
        while msg.expr.op == "reshape":
            reshapes.append(msg.expr)
            msg = Proxy(msg.expr.args[0], None)
    if msg.end == "src" and len(msg.expr.shape) == 1:
        # A node value read at the source ([N] features, PyG's node_dim=0):
        # spmm takes [rows, features], so [N, 1], and the result back to [N]
        # (gnn.reduce of other one-value messages takes [E] as it is).
        reshapes.append(Expr("reshape", ((None,),), (), "node", (None,), msg.expr.loc))
        x = msg.expr
        msg = Proxy(Expr("reshape", ((None, 1),), (x,), x.domain, (None, 1), x.loc),
                    msg.end)
    if msg.end == "src":
        x = msg.expr
        out = Expr("spmm", (aggr,), (x,), "node", x.shape, x.loc)
    else:
        m = msg.expr if msg.end is None else t.gather(msg.end, msg.expr)
        weighted = _weights_of(m)
        if weighted is not None:
            x, w = weighted
            out = Expr("spmm", (aggr,), (x, w), "node", x.shape, m.loc)
        else:
            out = Expr("reduce", (aggr,), (m,), "node", m.shape, m.loc)
    for r in reversed(reshapes):
        out = Expr("reshape", r.attrs, (out,), "node", r.shape, r.loc)
    return Proxy(out, None)
