"""Building `gnn`-dialect functions from Python, op by op.

A :class:`Builder` builds one function with the compiler's own MLIR
builders (through the native module): no IR text is written or parsed on the
way. The result of :meth:`Builder.finish` is what :func:`gnnc.compile`
takes, like a text module::

    from gnnc import ir

    f = ir.Builder("scaled_sum", "f32")
    x = f.arg([None, 16])                    # node features [N, 16]
    w = f.arg([None], edge=True)             # one weight per edge
    agg = f.spmm("sum", x, weights=w)        # sum_j w_ji x_j
    n = f.dim(agg)
    half = f.const(0.5)
    out = f.generic([(0, 1), (0, 1)], ["parallel", "parallel"],
                    [agg], [f.empty([None, 16], n)],
                    lambda a, o: a * half)
    fn = gnnc.compile(f.finish(out))

Values are :class:`Value` handles of the function being built. The body of
:meth:`Builder.generic` is a Python function of :class:`Scalar` block
arguments (one per input, then one per output) built with ``+ - * /``,
unary ``-``, comparisons (``< <= > >= == !=``, ordered; ``!=`` is
unordered-or-unequal, as ``arith.cmpf une``) and :func:`select`,
:func:`sqrt`, :func:`rsqrt`, :func:`exp`, :func:`log`, :func:`tanh`,
:func:`absf`, :func:`maximum`, :func:`minimum`. A Python number in a body
becomes a constant of the function (``f.const``); so does a scalar
:class:`Value` the body uses. Ops are created in the order they are
written.

Indexing maps are tuples with one entry per dimension of the operand: an
``int`` is the loop dimension it follows, ``Const(k)`` the constant ``k``.
``(0, 1)`` is the identity over two loops, ``(0,)`` the rows, ``(Const(0),)``
the only element of a ``[1]`` tensor.

Every op takes an optional ``name=``: ``Module.text(names=True)`` prints
that value as ``%name`` (the examples are printed so).

Mistakes are refused where they are made: a ``ValueError`` naming the op
(a wrong operand kind, an unknown reduction), or, from :meth:`finish`, a
:class:`gnnc.CompileError` with the verifier's diagnostics located at the
Python lines that built the ops.
"""

import os
import sys
from typing import Callable, List, Optional, Sequence, Tuple, Union

from . import _gnnc as _C

__all__ = [
    "Builder", "Value", "Scalar", "Const",
    "select", "sqrt", "rsqrt", "exp", "log", "tanh", "absf", "maximum", "minimum",
]

_HERE = os.path.dirname(os.path.abspath(__file__))


def _where() -> Tuple[str, int]:
    """The first caller outside this file (and gnnc's IR templates): the
    location the ops built now will carry."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    if frame is None:
        return ("<unknown>", 0)
    return (frame.f_code.co_filename, frame.f_lineno)


_INT64 = 1 << 63


class _Checked:
    """The native builder, whose argument conversion errors (nanobind's
    "incompatible function arguments", listing C++ signatures) become a
    TypeError naming the builder method and what it was given."""

    __slots__ = ("_native",)

    def __init__(self, native):
        self._native = native

    def __getattr__(self, method):
        f = getattr(self._native, method)

        def call(*args):
            try:
                return f(*args)
            except TypeError as e:
                if "incompatible function arguments" not in str(e):
                    raise
                if args and isinstance(args[-1], tuple) and len(args[-1]) == 2 and \
                        isinstance(args[-1][0], str):
                    args = args[:-1]  # (_where(): the caller's line, not an argument)
                given = ", ".join(_describe(a) for a in args)
                raise TypeError(f"gnnc.ir: {method}: an argument of the wrong type "
                                f"or out of range (an int must fit in 64 bits): "
                                f"got ({given})") from None
        return call


def _describe(a) -> str:
    if isinstance(a, (list, tuple)):
        inner = ", ".join(_describe(x) for x in a[:8])
        return f"[{inner}{', ...' if len(a) > 8 else ''}]"
    if isinstance(a, (bool, int, float, str)) or a is None:
        return repr(a)
    return type(a).__name__


class Const:
    """A constant entry of an indexing map."""

    __slots__ = ("value",)

    def __init__(self, value: int):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"gnnc.ir: Const takes an int, got {value!r}")
        self.value = value

    def __repr__(self):
        return f"Const({self.value})"


class Value:
    """A value of the function being built: a tensor, a scalar constant or
    an index (a dimension's size)."""

    __slots__ = ("function", "id", "kind", "shape")

    def __init__(self, function: "Builder", id: int):
        self.function = function
        self.id = id
        self.kind = function._b.kind(id)
        shape = function._b.shape(id)
        self.shape = tuple(None if d < 0 else d for d in shape)

    def __repr__(self):
        if self.kind == "tensor":
            dims = "x".join("?" if d is None else str(d) for d in self.shape)
            element = self.function._b.element(self.id)
            return f"<gnnc.ir.Value #{self.id} tensor<{dims}x{element}>>"
        return f"<gnnc.ir.Value #{self.id} {self.kind}>"

    # Arithmetic on a function-level scalar happens in a body.
    def __add__(self, other):
        return NotImplemented

    __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __add__
    __truediv__ = __rtruediv__ = __add__


class _Body:
    """The scalar ops of one generic's body, in the order they are made."""

    def __init__(self, function: "Builder", num_args: int):
        self.function = function
        self.num_args = num_args
        self.ops: List[tuple] = []

    def ref(self, x) -> tuple:
        if isinstance(x, Scalar):
            if x.body is not self:
                raise ValueError("gnnc.ir: a scalar of another generic's body")
            return x.ref
        if isinstance(x, Value):
            if x.function is not self.function:
                raise ValueError("gnnc.ir: a value of another function")
            if x.kind != "scalar":
                raise ValueError(f"gnnc.ir: a body can use a scalar of the "
                                 f"function, not {x!r}")
            return (2, x.id)
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            return (2, self.function.const(float(x)).id)
        raise TypeError(f"gnnc.ir: expected a scalar, a number or a scalar "
                        f"Value in a body, got {type(x).__name__}")

    def op(self, name: str, operands, predicate: str = "") -> "Scalar":
        refs = [self.ref(x) for x in operands]
        self.ops.append((name, refs, predicate))
        return Scalar(self, (1, len(self.ops) - 1), name == "arith.cmpf")


class Scalar:
    """A scalar in the body of :meth:`Builder.generic`."""

    __slots__ = ("body", "ref", "boolean")
    __hash__ = None  # == builds a comparison

    def __init__(self, body: _Body, ref: tuple, boolean: bool = False):
        self.body = body
        self.ref = ref
        self.boolean = boolean

    def _bin(self, name, other, swap=False):
        return self.body.op(name, (other, self) if swap else (self, other))

    def __add__(self, o): return self._bin("arith.addf", o)
    def __radd__(self, o): return self._bin("arith.addf", o, True)
    def __sub__(self, o): return self._bin("arith.subf", o)
    def __rsub__(self, o): return self._bin("arith.subf", o, True)
    def __mul__(self, o): return self._bin("arith.mulf", o)
    def __rmul__(self, o): return self._bin("arith.mulf", o, True)
    def __truediv__(self, o): return self._bin("arith.divf", o)
    def __rtruediv__(self, o): return self._bin("arith.divf", o, True)
    def __neg__(self): return self.body.op("arith.negf", (self,))

    def _cmp(self, predicate, other):
        return self.body.op("arith.cmpf", (self, other), predicate)

    def __lt__(self, o): return self._cmp("olt", o)
    def __le__(self, o): return self._cmp("ole", o)
    def __gt__(self, o): return self._cmp("ogt", o)
    def __ge__(self, o): return self._cmp("oge", o)
    def __eq__(self, o): return self._cmp("oeq", o)
    def __ne__(self, o): return self._cmp("une", o)

    def __bool__(self):
        raise TypeError("gnnc.ir: a body scalar has no truth value while the "
                        "function is built; use ir.select(condition, a, b)")


def _body_of(args) -> _Body:
    for a in args:
        if isinstance(a, Scalar):
            return a.body
    raise TypeError("gnnc.ir: a body function needs at least one body scalar "
                    "among its operands")


def _unary(name):
    def f(x):
        return _body_of((x,)).op(name, (x,))
    f.__name__ = name.split(".")[1]
    f.__doc__ = f"``{name}`` of a body scalar."
    return f


sqrt = _unary("math.sqrt")
rsqrt = _unary("math.rsqrt")
exp = _unary("math.exp")
log = _unary("math.log")
tanh = _unary("math.tanh")
absf = _unary("math.absf")


def maximum(a, b):
    """``arith.maximumf`` (NaN if either is NaN)."""
    return _body_of((a, b)).op("arith.maximumf", (a, b))


def minimum(a, b):
    """``arith.minimumf`` (NaN if either is NaN)."""
    return _body_of((a, b)).op("arith.minimumf", (a, b))


def select(condition, a, b):
    """``a`` where ``condition`` (a comparison) holds, else ``b``."""
    return _body_of((condition, a, b)).op("arith.select", (condition, a, b))


_Shape = Sequence[Optional[int]]


class Builder:
    """One `gnn` function under construction: ``name``, element type
    ``dtype`` (``"f32"``, ``"f64"``, ``"bf16"`` or ``"f16"``: every tensor,
    constant and body scalar has it, except arguments stored in another
    type, ``arg(..., dtype=...)``, and what :meth:`convert` makes of them);
    its first argument is the graph. Arguments come first (:meth:`arg`, each
    may be followed by its :meth:`convert`), then ops; :meth:`finish`
    returns the verified module for :func:`gnnc.compile`."""

    def __init__(self, name: str, dtype: str = "f32", bipartite: bool = False,
                 typed: bool = False):
        self.name = name
        self.dtype = dtype
        self.bipartite = bipartite
        # A typed graph (`!gnn.graph<typed>`): its edges carry relation ids,
        # read by the relation forms of gather and reduce.
        self.typed = typed
        for what, v, kind in (("name", name, str), ("dtype", dtype, str),
                              ("bipartite", bipartite, bool), ("typed", typed, bool)):
            if not isinstance(v, kind):
                raise TypeError(f"gnnc.ir: Builder's {what} is a {kind.__name__}, "
                                f"got {v!r}")
        self._b = _Checked(_C.FunctionBuilder(name, dtype, bipartite, typed))

    def _value(self, id: int, name: Optional[str] = None) -> Value:
        if name is not None:
            if not isinstance(name, str) or not name.isidentifier():
                raise ValueError(f"gnnc.ir: a value's name is an identifier, "
                                 f"got {name!r}")
            self._b.name(id, name)
        return Value(self, id)

    def _id(self, v, what: str) -> int:
        if not isinstance(v, Value):
            raise TypeError(f"gnnc.ir: {what}: expected a gnnc.ir.Value, "
                            f"got {type(v).__name__}")
        if v.function is not self:
            raise ValueError(f"gnnc.ir: {what}: a value of another function")
        return v.id

    @staticmethod
    def _shape(shape: _Shape) -> List[int]:
        out = []
        for d in shape:
            if d is None:
                out.append(-1)
            elif isinstance(d, int) and not isinstance(d, bool) and 0 <= d < _INT64:
                out.append(d)
            else:
                raise ValueError(f"gnnc.ir: a dimension is a size >= 0 (below "
                                 f"2**63) or None (dynamic), got {d!r}")
        return out

    # -- arguments and plain values --------------------------------------
    def arg(self, shape: _Shape, *, edge: bool = False, side: Optional[str] = None,
            differentiable: bool = True, name: Optional[str] = None,
            dtype: Optional[str] = None) -> Value:
        """A tensor argument; ``None`` marks the dynamic leading dimension
        (nodes, or edges with ``edge=True``; on a bipartite graph,
        ``Builder(..., bipartite=True)``, the sources' or destinations'
        rows with ``side="src"`` or ``"dst"``). ``differentiable=False``:
        the backward computes no gradient for it (a mask). ``dtype``: the
        argument's element type where it differs from the function's (the
        caller passes a tensor of it; its gradient comes back in it);
        :meth:`convert` it before an op reads it."""
        if side is not None and (edge or side not in ("src", "dst")):
            raise ValueError(f"gnnc.ir: side is 'src' or 'dst' (a node tensor "
                             f"of a bipartite graph), got {side!r}"
                             f"{' with edge=True' if edge else ''}")
        domain = "edge" if edge else side or "node"
        return self._value(self._b.argument(self._shape(shape), domain,
                                            differentiable, dtype or "", _where()), name)

    def convert(self, value: Value, dtype: Optional[str] = None,
                name: Optional[str] = None) -> Value:
        """Tensor ``value`` with its elements converted to ``dtype`` (None:
        the function's), rounded to nearest even where it narrows: an
        elementwise ``arith.truncf``/``extf`` into a new tensor; ``value``
        itself where it has that type. Its gradient is converted back."""
        return self._value(self._b.convert(self._id(value, "convert"),
                                           dtype or self.dtype, _where()), name)

    def element(self, value: Value) -> str:
        """The element type of tensor ``value``."""
        return self._b.element(self._id(value, "element"))

    def const(self, value: float, name: Optional[str] = None) -> Value:
        """A scalar constant (one per value)."""
        return self._value(self._b.constant(float(value), _where()), name)

    def dim(self, value: Value, axis: int = 0, name: Optional[str] = None) -> Value:
        """The size of dimension ``axis`` of a tensor (an index)."""
        return self._value(self._b.dim(self._id(value, "dim"), axis, _where()), name)

    def empty(self, shape: _Shape, *sizes: Value, name: Optional[str] = None) -> Value:
        """An uninitialised tensor; ``sizes``: one index per ``None``."""
        return self._value(self._b.empty(
            self._shape(shape), [self._id(s, "empty") for s in sizes], _where()), name)

    def fill(self, scalar: Value, tensor: Value, name: Optional[str] = None) -> Value:
        return self._value(self._b.fill(self._id(scalar, "fill"),
                                        self._id(tensor, "fill"), _where()), name)

    def zeros(self, shape: _Shape, *sizes: Value, name: Optional[str] = None) -> Value:
        """A tensor of zeros (an empty tensor filled with 0.0)."""
        e = self.empty(shape, *sizes)
        return self.fill(self.const(0.0), e, name=name)

    # -- dense ops -------------------------------------------------------
    def matmul(self, lhs: Value, rhs: Value, out: Value, *,
               transpose_rhs: bool = False, name: Optional[str] = None) -> Value:
        """``out + lhs @ rhs`` (``linalg.matmul``; ``out`` usually
        :meth:`zeros`); ``transpose_rhs=True``: ``out + lhs @ rhs.T`` with
        ``rhs`` ``[n, k]``, a ``torch.nn.Linear`` weight as it is stored (the
        matmul's indexing maps transpose it; no copy)."""
        return self._value(self._b.matmul(self._id(lhs, "matmul"),
                                          self._id(rhs, "matmul"),
                                          self._id(out, "matmul"),
                                          bool(transpose_rhs), _where()), name)

    def expand(self, x: Value, groups: Sequence[Sequence[int]], shape: _Shape,
               *sizes: Value, name: Optional[str] = None) -> Value:
        """``tensor.expand_shape``: dimension ``k`` of ``x`` becomes the
        result dimensions ``groups[k]`` of ``shape`` (``sizes``: one index
        per ``None``), e.g. ``[N, 64] -> [N, 4, 16]`` with ``[[0], [1, 2]]``."""
        return self._value(self._b.expand(
            self._id(x, "expand"), [list(g) for g in groups], self._shape(shape),
            [self._id(s, "expand") for s in sizes], _where()), name)

    def collapse(self, x: Value, groups: Sequence[Sequence[int]],
                 name: Optional[str] = None) -> Value:
        """``tensor.collapse_shape``: the dimensions of each group of ``x``
        merge into one."""
        return self._value(self._b.collapse(self._id(x, "collapse"),
                                            [list(g) for g in groups], _where()), name)

    # -- graph ops -------------------------------------------------------
    def spmm(self, reduce: str, x: Value, weights: Optional[Value] = None,
             reversed: bool = False, name: Optional[str] = None) -> Value:
        """``gnn.spmm``: per node, ``reduce`` over incoming edges of
        ``w_e * x[src]``."""
        w = -1 if weights is None else self._id(weights, "spmm")
        return self._value(self._b.spmm(reduce, self._id(x, "spmm"), w,
                                        reversed, _where()), name)

    def sddmm(self, kind: str, lhs: Value, rhs: Value,
              reversed: bool = False, name: Optional[str] = None) -> Value:
        """``gnn.sddmm``: per edge, ``lhs[src] kind rhs[dst]`` (``dot`` drops
        the last dimension)."""
        return self._value(self._b.sddmm(kind, self._id(lhs, "sddmm"),
                                         self._id(rhs, "sddmm"), reversed,
                                         _where()), name)

    def edge_softmax(self, x: Value, reversed: bool = False,
                     name: Optional[str] = None) -> Value:
        """``gnn.edge_softmax``: softmax over each node's incoming edges."""
        return self._value(self._b.edge_softmax(self._id(x, "edge_softmax"),
                                                reversed, _where()), name)

    def degree(self, reversed: bool = False, name: Optional[str] = None) -> Value:
        """``gnn.degree``: in-degree per node (out-degree if ``reversed``)."""
        return self._value(self._b.degree(reversed, _where()), name)

    def reduce(self, kind: str, x: Value, reversed: bool = False,
               name: Optional[str] = None, relations: int = 0) -> Value:
        """``gnn.reduce``: edge values combined onto their destinations.
        With ``relations=R`` (a typed graph, ``kind="sum"``): each edge adds
        into the row of its relation, a ``[nodes, R, ...]`` result."""
        if isinstance(relations, bool) or not isinstance(relations, int):
            raise TypeError(f"gnnc.ir: relations is an int, got {relations!r}")
        if not 0 <= relations < _INT64:
            raise ValueError(f"gnnc.ir: relations is a count >= 0 (below 2**63), "
                             f"got {relations}")
        return self._value(self._b.reduce(kind, self._id(x, "reduce"),
                                          reversed, relations, _where()), name)

    def gather(self, end: str, x: Value, name: Optional[str] = None,
               relation: bool = False) -> Value:
        """``gnn.gather``: node rows copied onto the edges (``src``/``dst``).
        With ``relation=True`` (a typed graph): ``x`` is ``[nodes, R, ...]``
        and each edge reads the row of its own relation."""
        return self._value(self._b.gather(end, self._id(x, "gather"), bool(relation),
                                          _where()), name)

    # -- elementwise and reductions ---------------------------------------
    def generic(self, maps: Sequence[Sequence[Union[int, Const]]],
                iterators: Sequence[str], ins: Sequence[Value],
                outs: Sequence[Value], body: Callable, name: Optional[str] = None):
        """A ``linalg.generic`` over ``len(iterators)`` loops (``parallel``
        or ``reduction``): one map per input and output, ``body`` called
        with one :class:`Scalar` per input and output and returning the
        yielded scalar (a tuple for several outputs). Returns the result, or
        a tuple of them."""
        where = _where()
        map_list = []
        for m in maps:
            entries = []
            for e in m:
                if isinstance(e, Const):
                    entries.append((False, e.value))
                elif isinstance(e, int) and not isinstance(e, bool):
                    entries.append((True, e))
                else:
                    raise TypeError(f"gnnc.ir: generic: a map entry is a loop "
                                    f"dimension (int) or Const(k), got {e!r}")
            map_list.append(entries)
        in_ids = [self._id(v, "generic") for v in ins]
        out_ids = [self._id(v, "generic") for v in outs]
        b = _Body(self, len(in_ids) + len(out_ids))
        args = [Scalar(b, (0, i)) for i in range(len(in_ids) + len(out_ids))]
        yielded = body(*args)
        if not isinstance(yielded, tuple):
            yielded = (yielded,)
        yields = [b.ref(y) for y in yielded]
        ids = self._b.generic(len(iterators), map_list, list(iterators), in_ids,
                              out_ids, b.ops, yields, where)
        if name is not None and ids:
            self._value(ids[0], name)
        values = tuple(self._value(i) for i in ids)
        return values[0] if len(values) == 1 else values

    def finish(self, *results: Value):
        """Returns ``results``, verifies the function and gives its module
        (for :func:`gnnc.compile`); the builder cannot be used afterwards."""
        ids = [self._id(r, "finish") for r in results]
        return self._b.finish(ids, _where())
