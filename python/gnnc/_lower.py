"""Lowering a traced message-passing expression graph (`gnnc._trace`) to a
`gnn` function with `gnnc.ir`.

- Leaves become the function's arguments: node tensors, edge tensors, the
  plain tensors the layer captured (dense), dropout masks (no gradient).
- Graph ops map one to one: ``gather``, ``softmax`` (``gnn.edge_softmax``),
  ``spmm``, ``reduce``.
- An elementwise op of two same-shaped values read at the two ends of the
  edges (``x_j + x_i``, ``x_j - x_i``, ``x_j * x_i``) is one ``gnn.sddmm``;
  ``(x_j * x_i).sum(-1)`` is ``gnn.sddmm dot``: neither gathers features.
- Every other tree of elementwise ops (with broadcasting and inserted unit
  dimensions) is one ``linalg.generic`` whose body is the tree; a sum over a
  feature dimension is one with a reduction loop; matmuls are
  ``linalg.matmul``; reshapes ``tensor.expand_shape`` / ``collapse_shape``,
  except those that only insert or drop unit dimensions: generics, through
  which the verifiers still tell edge tensors from node tensors (they do not
  through every reassociation).

Each op is built inside a frame located at the user's line that traced it,
so the verifier's diagnostics (and the IR's locations) point at the layer's
own ``message`` / ``update``.
"""

import re
from typing import Dict, List, Tuple

from . import ir
from ._trace import Expr, fail

_P, _R = "parallel", "reduction"
_LEAVES = ("node_arg", "edge_arg", "dense_arg", "mask_arg")
_ARG_ORDER = {"node_arg": 0, "edge_arg": 1, "dense_arg": 2, "mask_arg": 3}


# --------------------------------------------------------------------------
# Structure: the cache key of a traced graph and its arguments' order.

def _attrs_key(e: Expr) -> tuple:
    if e.op == "num":
        return (float(e.attrs[0]).hex(),)
    if e.op == "cat":
        return ("cat",)
    return tuple(float(a).hex() if isinstance(a, float) else a for a in e.attrs)


def structure(outputs: List[Expr]) -> Tuple[tuple, List[Expr]]:
    """(key, leaves): a hashable description of the graph reachable from
    ``outputs`` (equal for two traces that build the same function), and
    its argument leaves in argument order (node, edge, dense, masks; each
    in the order first met)."""
    index: Dict[int, int] = {}
    entries = []
    leaves = []
    stack = [(e, False) for e in reversed(outputs)]
    while stack:
        e, done = stack.pop()
        if id(e) in index:
            continue
        if not done:
            stack.append((e, True))
            for a in reversed(e.args):
                if id(a) not in index:
                    stack.append((a, False))
            continue
        index[id(e)] = len(entries)
        if e.op in _LEAVES:
            leaves.append(e)
        entries.append((e.op, _attrs_key(e), e.domain, e.shape, e.boolean,
                        tuple(index[id(a)] for a in e.args)))
    leaves.sort(key=lambda e: _ARG_ORDER[e.op])  # stable: first met first
    order = tuple(index[id(e)] for e in leaves)
    return (tuple(entries), tuple(index[id(o)] for o in outputs), order), leaves


# --------------------------------------------------------------------------
# Building ops at the user's line.

_TRAMPOLINES = {}


def _at(loc, fn, *args, **kwargs):
    """``fn(*args)`` called from a frame located at ``loc`` (the user's
    file and line): gnnc.ir locates the ops it builds at their first caller
    outside gnnc.ir."""
    file, line = loc[0], loc[1]
    tramp = _TRAMPOLINES.get((file, line))
    if tramp is None:
        src = "\n" * max(line - 1, 0) + "def _t(fn, a, k): return fn(*a, **k)\n"
        scope = {}
        exec(compile(src, file, "exec"), scope)
        tramp = _TRAMPOLINES[(file, line)] = scope["_t"]
    return tramp(fn, args, kwargs)


def _cmpf(pred):
    def f(a, b):
        return ir._body_of((a, b)).op("arith.cmpf", (a, b), pred)
    return f


# Elementwise ops that are one gnnc.ir function of one operand.
_UNARY = {"exp": ir.exp, "log": ir.log, "sqrt": ir.sqrt, "rsqrt": ir.rsqrt,
          "tanh": ir.tanh, "abs": ir.absf}


def _scalar(fn: str, attrs: tuple, a):
    """The body of elementwise op ``fn`` on scalars (numbers or ir.Scalar)."""
    if fn == "add":
        return a[0] + a[1]
    if fn == "sub":
        return a[0] - a[1]
    if fn == "mul":
        return a[0] * a[1]
    if fn == "div":
        return a[0] / a[1]
    if fn == "neg":
        return -a[0]
    if fn in _UNARY:
        return _UNARY[fn](a[0])
    if fn == "sigmoid":
        return 1.0 / (1.0 + ir.exp(-a[0]))
    if fn == "relu":
        # torch.relu: 0 where x <= 0, x itself elsewhere, NaN included (a
        # `x > 0` test would make NaN 0); the form gnnc.nn writes, whose
        # gradient mask the compiler reads from the result and whose GEMM
        # epilogue takes it (docs/Autodiff.md, docs/Codegen.md).
        return ir.select(a[0] <= 0.0, 0.0, a[0])
    if fn == "leaky":
        return ir.select(a[0] > 0.0, a[0], a[0] * attrs[0])
    if fn == "elu":
        return ir.select(a[0] > 0.0, a[0], attrs[0] * (ir.exp(a[0]) - 1.0))
    if fn == "max":
        return ir.maximum(a[0], a[1])
    if fn == "min":
        return ir.minimum(a[0], a[1])
    if fn == "where":
        return ir.select(a[0], a[1], a[2])
    if fn == "cmp":
        return _cmpf(attrs[0])(a[0], a[1])
    raise AssertionError(f"gnnc: no body for elementwise op {fn!r}")


def _unit_insertion(inner: tuple, outer: tuple):
    """The positions of ``outer`` that are inserted unit dimensions when
    ``outer`` is ``inner`` with 1s inserted (None otherwise)."""
    inserted, k = [], 0
    for j, d in enumerate(outer):
        if k < len(inner) and inner[k] == d:
            k += 1
        elif d == 1:
            inserted.append(j)
        else:
            return None
    return inserted if k == len(inner) else None


def _sddmm_form(e: Expr):
    """(kind, src node expr, dst node expr, negate) when ``e`` is
    ``a[src] op b[dst]`` for same-shaped a, b and op add/sub/mul."""
    if e.op != "ew" or e.attrs[0] not in ("add", "sub", "mul") or len(e.args) != 2:
        return None
    a, b = e.args
    if a.op != "gather" or b.op != "gather" or a.attrs[0] == b.attrs[0]:
        return None
    if a.shape != e.shape or b.shape != e.shape or a.boolean or b.boolean:
        return None
    kind = e.attrs[0]
    if a.attrs[0] == "src":
        return kind, a.args[0], b.args[0], False
    if kind == "sub":  # x_i - x_j = -(x_j - x_i)
        return kind, b.args[0], a.args[0], True
    return kind, b.args[0], a.args[0], False


def _dot_form(e: Expr):
    """(src node expr, dst node expr) when ``e`` (a sum over the last
    dimension) is ``(a[src] * b[dst]).sum(-1)`` for same-shaped a, b."""
    if e.op != "sum" or e.attrs[0] != len(e.args[0].shape) - 1:
        return None
    m = e.args[0]
    form = _sddmm_form(m)
    if form is None or form[0] != "mul":
        return None
    return form[1], form[2]


class Lowering:
    """Builds the function of one traced graph."""

    def __init__(self, name: str, dtype: str):
        self.f = ir.Builder(name, dtype)
        self.values: Dict[object, ir.Value] = {}
        self._canon: Dict[int, object] = {}
        self._keep = []

    # -- arguments ---------------------------------------------------------
    def arguments(self, leaves: List[Expr]) -> None:
        """One argument per leaf; only tensors that want a gradient are
        differentiable (the gradients of the others would cost kernels)."""
        f = self.f
        for e in leaves:
            v = f.arg(list(e.shape), edge=(e.domain == "edge"),
                      differentiable=e.attrs[0])
            self.values[id(e)] = v
            self._canonical(e)

    def finish(self, outputs: List[Expr]):
        vals = [self.value(o) for o in outputs]
        return _at(outputs[0].loc, self.f.finish, *vals)

    # -- values ------------------------------------------------------------
    def _canonical(self, e: Expr):
        """Equal for structurally equal expressions (x_i.view(...) and
        x_j.view(...) reshape one node tensor once)."""
        c = self._canon.get(id(e))
        if c is None:
            if e.op in _LEAVES:
                c = ("leaf", id(e))
            else:
                c = (e.op, _attrs_key(e), e.domain, e.shape, e.boolean,
                     tuple(self._canonical(a) for a in e.args))
            self._canon[id(e)] = c
            self._keep.append(e)
        return c

    def value(self, e: Expr) -> ir.Value:
        if e.op in _LEAVES:
            return self.values[id(e)]
        key = self._canonical(e)
        v = self.values.get(key)
        if v is None:
            v = self._lower(e)
            self.values[key] = v
        return v

    def _rows(self, v: ir.Value) -> ir.Value:
        """The row count of ``v`` (one tensor.dim per value)."""
        key = ("rows", v.id)
        d = self.values.get(key)
        if d is None:
            d = self.values[key] = self.f.dim(v, 0)
        return d

    def _lower(self, e: Expr) -> ir.Value:
        f, op = self.f, e.op
        if op == "gather":
            return _at(e.loc, f.gather, e.attrs[0], self.value(e.args[0]))
        if op == "softmax":
            return _at(e.loc, f.edge_softmax, self.value(e.args[0]), e.attrs[0])
        if op == "spmm":
            w = self.value(e.args[1]) if len(e.args) > 1 else None
            return _at(e.loc, f.spmm, e.attrs[0], self.value(e.args[0]), weights=w)
        if op == "reduce":
            return _at(e.loc, f.reduce, e.attrs[0], self.value(e.args[0]))
        if op == "matmul":
            x = self.value(e.args[0])
            w = self.value(e.args[1])
            out = _at(e.loc, f.zeros, [None, e.shape[1]], self._rows(x))
            return _at(e.loc, f.matmul, x, w, out)
        if op == "sum":
            dot = _dot_form(e)
            if dot is not None:
                return _at(e.loc, f.sddmm, "dot", self.value(dot[0]), self.value(dot[1]))
            return self._region(e.args[0], e.loc, reduce_dim=e.attrs[0])
        if op == "ew":
            form = _sddmm_form(e)
            if form is not None and not form[3]:
                return _at(e.loc, f.sddmm, form[0], self.value(form[1]),
                           self.value(form[2]))
            return self._region(e, e.loc)
        if op == "reshape":
            return self._reshape(e)
        if op == "cat":
            fail("torch.cat", "is only traced as the input of a matmul or linear "
                 "layer (cat([a, b], -1) @ W)", e.loc)
        if op == "num":
            fail("a constant", "is not a node or edge tensor", e.loc)
        raise AssertionError(f"gnnc: cannot lower {e!r}")

    # -- elementwise regions -----------------------------------------------
    def _region(self, root: Expr, loc, reduce_dim=None) -> ir.Value:
        """One linalg.generic computing the elementwise tree under ``root``
        (and, with ``reduce_dim``, summing it over that dimension)."""
        rank = len(root.shape)
        leaves: List[Tuple[ir.Value, tuple]] = []
        slots: Dict[tuple, int] = {}

        # The tree, as nested (kind, ...) nodes evaluated in the body.
        def visit(e: Expr, m: tuple):
            if e.op == "num":
                return ("num", e.attrs[0])
            form = _sddmm_form(e) if e.op == "ew" else None
            if e.op == "ew" and (form is None or form[3]):
                if form is not None:  # x_i - x_j: negated sddmm sub
                    inner = Expr("ew", ("sub",), (e.args[1], e.args[0]), e.domain,
                                 e.shape, e.loc)
                    return ("ew", "neg", (), [leaf(self._sddmm_neg(e, inner), m)])
                kids = [visit(a, _child_map(m, e.shape, a.shape)) for a in e.args]
                return ("ew", e.attrs[0], e.attrs[1:], kids)
            if e.op == "reshape":
                inner = e.args[0]
                ins = _unit_insertion(inner.shape, e.shape)
                if ins is not None:
                    return visit(inner, tuple(x for j, x in enumerate(m) if j not in ins))
            return leaf(self.value(e), m)

        def leaf(v: ir.Value, m: tuple):
            key = (v.id, tuple(x.value if isinstance(x, ir.Const) else ("L", x) for x in m))
            k = slots.get(key)
            if k is None:
                k = slots[key] = len(leaves)
                leaves.append((v, m))
            return ("arg", k)

        tree = visit(root, tuple(range(rank)))
        rows = None
        for v, m in leaves:
            if v.shape and v.shape[0] is None and m and m[0] == 0:
                rows = self._rows(v)
                break
        if reduce_dim is None:
            out_shape = list(root.shape)
            out_map = tuple(range(rank))
            iterators = [_P] * rank
            init = _at(loc, self.f.empty, out_shape, rows)
        else:
            # The reduced dimension is the last loop (the CUDA backend wants
            # parallel loops first): dimension j is loop perm[j].
            perm = [j if j < reduce_dim else j - 1 for j in range(rank)]
            perm[reduce_dim] = rank - 1
            leaves = [(v, tuple(perm[e] if isinstance(e, int) else e for e in m))
                      for v, m in leaves]
            out_shape = [d for j, d in enumerate(root.shape) if j != reduce_dim]
            out_map = tuple(range(rank - 1))
            iterators = [_P] * (rank - 1) + [_R]
            init = _at(loc, self.f.zeros, out_shape, rows)
        nleaves = len(leaves)

        def body(*block):
            memo = {}

            def ev(node):
                if node[0] == "num":
                    return node[1]
                if node[0] == "arg":
                    return block[node[1]]
                key = id(node)
                r = memo.get(key)
                if r is None:
                    r = _scalar(node[1], node[2], [ev(k) for k in node[3]])
                    memo[key] = r
                return r

            val = ev(tree)
            if reduce_dim is not None:
                return block[nleaves] + val
            return val

        maps = [m for _, m in leaves] + [out_map]
        return _at(loc, self.f.generic, maps, iterators, [v for v, _ in leaves], [init],
                   body)

    def _sddmm_neg(self, e: Expr, inner: Expr) -> ir.Value:
        key = ("sddmm-sub", self._canonical(e))
        v = self.values.get(key)
        if v is None:
            form = _sddmm_form(inner)
            v = _at(e.loc, self.f.sddmm, "sub", self.value(form[1]), self.value(form[2]))
            self.values[key] = v
        return v

    # -- reshapes ----------------------------------------------------------
    def _reshape(self, e: Expr) -> ir.Value:
        f = self.f
        src = e.args[0]
        x = self.value(src)
        old, new = src.shape, e.shape
        if tuple(d for d in old if d != 1) == tuple(d for d in new if d != 1):
            return self._unit_reshape(x, old, new, e.loc)
        if len(old) > 2:  # to [rows, features]
            x = _at(e.loc, f.collapse, x, [[0], list(range(1, len(old)))])
        elif len(old) == 1:  # [rows] -> [rows, 1]
            x = _at(e.loc, f.expand, x, [[0, 1]], [None, 1], self._rows(x))
        if len(new) > 2:
            x = _at(e.loc, f.expand, x, [[0], list(range(1, len(new)))], list(new),
                    self._rows(x))
        elif len(new) == 1:
            x = _at(e.loc, f.collapse, x, [[0, 1]])
        return x

    def _unit_reshape(self, x: ir.Value, old: tuple, new: tuple, loc) -> ir.Value:
        """Unit dimensions removed and inserted through generics (reads and
        writes of the same elements)."""
        f = self.f
        rows = self._rows(x)
        keep = [j for j, d in enumerate(old) if d != 1 or j == 0]
        if len(keep) != len(old):
            # A sum over the dropped (unit) dimensions, as the last loops
            # (the CUDA backend wants parallel loops first).
            shape = [old[j] for j in keep]
            dropped = [j for j in range(len(old)) if j not in keep]
            src_map = tuple(keep.index(j) if j in keep else len(keep) + dropped.index(j)
                            for j in range(len(old)))
            iters = [_P] * len(keep) + [_R] * len(dropped)
            x = _at(loc, f.generic, [src_map, tuple(range(len(keep)))], iters, [x],
                    [_at(loc, f.zeros, shape, rows)], lambda a, o: o + a)
            old = tuple(shape)
        ins = _unit_insertion(old, new)
        if ins:
            src_map = tuple(j for j in range(len(new)) if j not in ins)
            x = _at(loc, f.generic, [src_map, tuple(range(len(new)))],
                    [_P] * len(new), [x], [_at(loc, f.empty, list(new), rows)],
                    lambda a, o: a)
        return x


def _child_map(m: tuple, parent: tuple, child: tuple) -> tuple:
    """The map of a broadcast operand: right-aligned with its parent, a
    size-1 dimension against a larger one reads element 0."""
    off = len(parent) - len(child)
    out = []
    for j, d in enumerate(child):
        p = parent[off + j]
        out.append(ir.Const(0) if d == 1 and p != 1 else m[off + j])
    return tuple(out)


def function_name(layer: str) -> str:
    """A symbol name for the layer's function."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", layer).lower() or "layer"
    if name[0].isdigit():
        name = "_" + name
    return "mp_" + name


def build(layer: str, dtype: str, outputs: List[Expr], leaves: List[Expr]):
    """The module of the traced graph (``outputs`` over ``leaves``, in
    argument order) and its function's name."""
    low = Lowering(function_name(layer), dtype)
    low.arguments(leaves)
    return low.finish(outputs), low.f.name
