"""IR templates of the graph part of the `gnnc.nn` layers.

Each function returns ``(source, name)``: one `gnn`-dialect function, written
for one layer configuration (channels, heads, element type, flags), that
`gnnc.compile` turns into forward and backward kernels. The dense projections
(`x W^T + b`) stay in PyTorch; what runs here is everything that touches the
graph: scores on edges (`gnn.sddmm`), their softmax (`gnn.edge_softmax`), the
aggregation (`gnn.spmm`) and the degree normalisation, plus the elementwise work
between them, so the compiler can fuse it all.

Conventions shared by the templates:

- ``keep`` (an edge tensor of 0/1 values, ``{gnn.domain = "edge"}``) masks the
  edges a layer must ignore: self-loops of the input graph that PyG removes
  before adding one self-loop per node. A masked edge gets the score ``-inf``,
  hence the softmax weight exactly 0 (docs/Semantics.md).
- ``drop`` (an edge tensor ``[E, heads]``) is the attention dropout mask,
  ``bernoulli(1 - p) / (1 - p)``, multiplied into the softmax weights, as PyG's
  ``F.dropout`` on the attention coefficients.
- With ``edge=True`` the attention templates take the edge features' share
  as an edge argument after the node arguments (GAT: the score term
  ``[E, heads]``; GATv2, Transformer: the projected features ``[E, heads, C]``).
- Argument order: node tensors and parameters, then the edge-feature term,
  ``keep``, ``drop``.
- Node results keep the heads: ``[N, heads, C]``; concatenation or the mean over
  heads happens in PyTorch (a view or a mean). With ``weights=True`` the
  attention templates also return the attention coefficients ``[E, heads]``
  (for ``return_attention_weights``).

The generated text is deterministic, so `gnnc.compile`'s cache sees the same
source for the same configuration.
"""

import functools
import math
import re

__all__ = [
    "gcn", "sage", "gin", "gat", "gatv2", "transformer", "agnn",
]

_NEG_INF = {"f32": "0xFF800000", "f64": "0xFFF0000000000000"}


def _float(value: float) -> str:
    """A float literal MLIR parses at full double precision (always with '.')."""
    if not math.isfinite(value):
        raise ValueError(f"expected a finite constant, got {value}")
    return f"{value:.17e}"


def _elem(dtype: str) -> str:
    if dtype not in ("f32", "f64"):
        raise ValueError(f"expected element type 'f32' or 'f64', got {dtype!r}")
    return dtype


class _Builder:
    """Collects the lines of one function body with fresh SSA names."""

    def __init__(self, t: str):
        self.t = t
        self.lines = []
        self.count = 0
        self.consts = {}

    def fresh(self, hint: str) -> str:
        self.count += 1
        return f"%{hint}{self.count}"

    def emit(self, line: str) -> None:
        self.lines.append("  " + line)

    def const(self, text: str) -> str:
        """A scalar constant of the element type (deduplicated)."""
        if text not in self.consts:
            name = self.fresh("cst")
            self.emit(f"{name} = arith.constant {text} : {self.t}")
            self.consts[text] = name
        return self.consts[text]

    def index0(self) -> str:
        if "c0" not in self.consts:
            self.emit("%c0 = arith.constant 0 : index")
            self.consts["c0"] = "%c0"
        return "%c0"

    def dim0(self, value: str, ty: str) -> str:
        name = self.fresh("n")
        self.emit(f"{name} = tensor.dim {value}, {self.index0()} : {ty}")
        return name

    def empty(self, rows: str, ty: str) -> str:
        name = self.fresh("e")
        self.emit(f"{name} = tensor.empty({rows}) : {ty}")
        return name

    def zeros(self, rows: str, ty: str) -> str:
        e = self.empty(rows, ty)
        name = self.fresh("z")
        self.emit(f"{name} = linalg.fill ins({self.const(_float(0.0))} : {self.t}) "
                  f"outs({e} : {ty}) -> {ty}")
        return name

    def generic(self, maps, iterators, ins, outs, body, result_ty) -> str:
        """A one-result linalg.generic. ``ins``/``outs`` are (value, type) pairs;
        ``body`` gets the block argument names and returns (lines, yielded)."""
        name = self.fresh("g")
        args = [f"%a{i}" for i in range(len(ins) + len(outs))]
        lines, yielded = body(*args)
        # Names defined in the body get a suffix unique to this op, so they
        # never shadow the function's arguments or another body's names.
        defined = [line.split("=", 1)[0].strip() for line in lines if "=" in line]
        suffix = name[1:]
        for d in sorted(defined, key=len, reverse=True):
            pattern = re.compile(re.escape(d) + r"\b")
            lines = [pattern.sub(f"{d}_{suffix}", line) for line in lines]
            yielded = pattern.sub(f"{d}_{suffix}", yielded)
        maps_text = ", ".join(f"affine_map<{m}>" for m in maps)
        iters = ", ".join(f'"{i}"' for i in iterators)
        ins_text = ", ".join(v for v, _ in ins)
        ins_ty = ", ".join(t for _, t in ins)
        outs_text = ", ".join(v for v, _ in outs)
        outs_ty = ", ".join(t for _, t in outs)
        self.emit(f"{name} = linalg.generic {{indexing_maps = [{maps_text}], "
                  f"iterator_types = [{iters}]}}")
        self.emit(f"    ins({ins_text} : {ins_ty}) outs({outs_text} : {outs_ty}) {{")
        block_args = ", ".join(f"{a}: {self.t}" for a in args)
        self.emit(f"^bb0({block_args}):")
        for line in lines:
            self.emit("  " + line)
        self.emit(f"  linalg.yield {yielded} : {self.t}")
        self.emit(f"}} -> {result_ty}")
        return name

    def function(self, name: str, args, results) -> str:
        """The whole function: ``args`` are (name, type, attrs-or-None)."""
        # Masks (self-loops, dropout) get no gradient: only the other
        # arguments are marked differentiable, so the backward computes
        # nothing for them.
        def attrs(n, a):
            marks = [a] if a else []
            if n not in _NOT_DIFFERENTIABLE:
                marks.append("gnn.differentiable")
            return f" {{{', '.join(marks)}}}" if marks else ""
        arg_text = ", ".join(f"{n}: {t}" + attrs(n, a) for n, t, a in args)
        res_ty = ", ".join(t for _, t in results)
        res_val = ", ".join(v for v, _ in results)
        if len(results) > 1:
            res_sig = f"({res_ty})"
        else:
            res_sig = res_ty
        head = f"func.func @{name}(%g: !gnn.graph, {arg_text}) -> {res_sig} {{"
        return "\n".join([head] + self.lines +
                         [f"  return {res_val} : {res_ty}", "}", ""])


_EDGE = 'gnn.domain = "edge"'
_NOT_DIFFERENTIABLE = ("%keep", "%drop")


def _leaky(b: _Builder, v: str, slope: float):
    """Lines computing leaky_relu(v) inside a body; returns (lines, name)."""
    t = b.t
    zero, s = b.const(_float(0.0)), b.const(_float(slope))
    return ([f"%neg = arith.mulf {v}, {s} : {t}",
             f"%pos = arith.cmpf ogt, {v}, {zero} : {t}",
             f"%lr = arith.select %pos, {v}, %neg : {t}"], "%lr")


def _mask_scores(b: _Builder, score: str, rows: str, heads):
    """score[e, h] where keep[e] > 0.5, else -inf (weight 0 after the softmax)."""
    t = b.t
    half, ninf = b.const(_float(0.5)), b.const(_NEG_INF[t])
    if heads is None:
        ty, maps, iters = f"tensor<?x{t}>", ["(d0) -> (d0)"] * 3, ["parallel"]
    else:
        ty = f"tensor<?x{heads}x{t}>"
        maps = ["(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0)", "(d0, d1) -> (d0, d1)"]
        iters = ["parallel", "parallel"]
    out = b.empty(rows, ty)

    def body(s, k, o):
        return ([f"%keep = arith.cmpf ogt, {k}, {half} : {t}",
                 f"%r = arith.select %keep, {s}, {ninf} : {t}"], "%r")

    return b.generic(maps, iters, [(score, ty), ("%keep", f"tensor<?x{t}>")],
                     [(out, ty)], body, ty)


def _softmax_aggregate(b: _Builder, score: str, feats: str, heads: int,
                       channels: int, masked: bool, dropout: bool):
    """edge_softmax of score [E, H] (masked, dropped out) weighting feats
    [N, H, C]. Returns (aggregate, softmax weights, weights after dropout)."""
    t = b.t
    sty = f"tensor<?x{heads}x{t}>"
    fty = f"tensor<?x{heads}x{channels}x{t}>"
    rows = b.dim0(score, sty)
    if masked:
        score = _mask_scores(b, score, rows, heads)
    alpha = b.fresh("alpha")
    b.emit(f"{alpha} = gnn.edge_softmax %g, {score} : {sty}")
    softmax = alpha
    if dropout:
        out = b.empty(rows, sty)
        alpha = b.generic(["(d0, d1) -> (d0, d1)"] * 3, ["parallel", "parallel"],
                          [(alpha, sty), ("%drop", sty)], [(out, sty)],
                          lambda a, m, o: ([f"%r = arith.mulf {a}, {m} : {t}"], "%r"),
                          sty)
    agg = b.fresh("agg")
    b.emit(f"{agg} = gnn.spmm sum %g, {feats} weights({alpha} : {sty}) : {fty} -> {fty}")
    return agg, softmax, alpha


def _attention_args(t: str, heads: int, masked: bool, dropout: bool):
    args = []
    if masked:
        args.append(("%keep", f"tensor<?x{t}>", _EDGE))
    if dropout:
        args.append(("%drop", f"tensor<?x{heads}x{t}>", _EDGE))
    return args


@functools.lru_cache(maxsize=None)
def gcn(channels: int, dtype: str, normalize: bool, weighted: bool):
    """GCN propagation of h = x W^T [N, C].

    - ``normalize=False``: ``out_i = sum_{e: j -> i} w_e h_j``.
    - ``normalize=True``: ``out_i = sum_{e: j -> i} w_e d_j^-1/2 d_i^-1/2 h_j``
      with ``d_i = sum_{e -> i} w_e`` and ``d^-1/2 = 0`` where ``d = 0`` (PyG's
      gcn_norm); ``w_e`` is the edge argument ``%w`` when ``weighted`` (the graph
      then carries the self-loops PyG adds), else 1.
    """
    t = _elem(dtype)
    b = _Builder(t)
    nty = f"tensor<?x{channels}x{t}>"
    vty = f"tensor<?x{t}>"
    args = [("%h", nty, None)]
    if weighted:
        args.append(("%w", vty, _EDGE))
    weights = f" weights(%w : {vty})" if weighted else ""
    if not normalize:
        b.emit(f"%out = gnn.spmm sum %g, %h{weights} : {nty} -> {nty}")
        return b.function("gcn", args, [("%out", nty)]), "gcn"
    if weighted:
        b.emit(f"%deg = gnn.reduce sum %g, %w : {vty} -> {vty}")
    else:
        b.emit(f"%deg = gnn.degree %g : {vty}")
    n = b.dim0("%h", nty)
    zero = b.const(_float(0.0))
    dinv = b.generic(["(d0) -> (d0)"] * 2, ["parallel"], [("%deg", vty)],
                     [(b.empty(n, vty), vty)],
                     lambda d, o: ([f"%pos = arith.cmpf une, {d}, {zero} : {t}",
                                    f"%r = math.rsqrt {d} : {t}",
                                    f"%s = arith.select %pos, %r, {zero} : {t}"], "%s"),
                     vty)
    rowmaps = ["(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0)", "(d0, d1) -> (d0, d1)"]
    scale = lambda v, d, o: ([f"%m = arith.mulf {v}, {d} : {t}"], "%m")
    hs = b.generic(rowmaps, ["parallel", "parallel"], [("%h", nty), (dinv, vty)],
                   [(b.empty(n, nty), nty)], scale, nty)
    b.emit(f"%agg = gnn.spmm sum %g, {hs}{weights} : {nty} -> {nty}")
    out = b.generic(rowmaps, ["parallel", "parallel"], [("%agg", nty), (dinv, vty)],
                    [(b.empty(n, nty), nty)], scale, nty)
    return b.function("gcn", args, [(out, nty)]), "gcn"


@functools.lru_cache(maxsize=None)
def sage(channels: int, dtype: str, aggr: str):
    """SAGE neighbourhood aggregation: ``out_i = aggr_{j -> i} x_j`` (0 when none)."""
    t = _elem(dtype)
    if aggr not in ("sum", "mean", "max", "min"):
        raise ValueError(f"unsupported aggregation {aggr!r}")
    b = _Builder(t)
    nty = f"tensor<?x{channels}x{t}>"
    b.emit(f"%out = gnn.spmm {aggr} %g, %x : {nty} -> {nty}")
    name = f"sage_{aggr}"
    return b.function(name, [("%x", nty, None)], [("%out", nty)]), name


@functools.lru_cache(maxsize=None)
def gin(channels: int, dtype: str):
    """GIN aggregation: ``out_i = (1 + eps) x_i + sum_{j -> i} x_j``."""
    t = _elem(dtype)
    b = _Builder(t)
    nty = f"tensor<?x{channels}x{t}>"
    one = b.const(_float(1.0))
    b.emit(f"%agg = gnn.spmm sum %g, %x : {nty} -> {nty}")
    n = b.dim0("%x", nty)
    out = b.generic(["(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0, d1)", "(d0, d1) -> (0)",
                     "(d0, d1) -> (d0, d1)"], ["parallel", "parallel"],
                    [("%x", nty), ("%agg", nty), ("%eps", f"tensor<1x{t}>")],
                    [(b.empty(n, nty), nty)],
                    lambda x, a, e, o: ([f"%k = arith.addf {one}, {e} : {t}",
                                         f"%m = arith.mulf %k, {x} : {t}",
                                         f"%s = arith.addf %m, {a} : {t}"], "%s"),
                    nty)
    args = [("%x", nty, None), ("%eps", f"tensor<1x{t}>", None)]
    return b.function("gin", args, [(out, nty)]), "gin"


def _head_dot(b: _Builder, h: str, att: str, n: str, heads: int, channels: int) -> str:
    """s[n, h] = sum_c h[n, h, c] * att[h, c]."""
    t = b.t
    hty = f"tensor<?x{heads}x{channels}x{t}>"
    sty = f"tensor<?x{heads}x{t}>"
    return b.generic(
        ["(d0, d1, d2) -> (d0, d1, d2)", "(d0, d1, d2) -> (d1, d2)", "(d0, d1, d2) -> (d0, d1)"],
        ["parallel", "parallel", "reduction"],
        [(h, hty), (att, f"tensor<{heads}x{channels}x{t}>")], [(b.zeros(n, sty), sty)],
        lambda v, a, o: ([f"%m = arith.mulf {v}, {a} : {t}",
                          f"%s = arith.addf {o}, %m : {t}"], "%s"),
        sty)


@functools.lru_cache(maxsize=None)
def gat(heads: int, channels: int, dtype: str, negative_slope: float,
        masked: bool, dropout: bool, weights: bool = False, edge: bool = False):
    """GAT attention over h [N, H, C]:
    ``alpha = softmax_i(leaky_relu(att_src . h_j + att_dst . h_i [+ s_ji]))``,
    ``out_i = sum_j alpha_ji h_j`` -> [N, H, C]. With ``edge``, the edge
    argument ``%escore`` [E, H] holds the edge features' score term
    ``att_edge . W_e e_ji``."""
    t = _elem(dtype)
    b = _Builder(t)
    hty = f"tensor<?x{heads}x{channels}x{t}>"
    aty = f"tensor<{heads}x{channels}x{t}>"
    sty = f"tensor<?x{heads}x{t}>"
    n = b.dim0("%h", hty)
    a_src = _head_dot(b, "%h", "%att_src", n, heads, channels)
    a_dst = _head_dot(b, "%h", "%att_dst", n, heads, channels)
    b.emit(f"%e = gnn.sddmm add %g, {a_src}, {a_dst} : {sty}, {sty} -> {sty}")
    ne = b.dim0("%e", sty)
    if edge:
        def body(v, es, o):
            lines, lr = _leaky(b, "%sum", negative_slope)
            return [f"%sum = arith.addf {v}, {es} : {t}"] + lines, lr

        score = b.generic(["(d0, d1) -> (d0, d1)"] * 3, ["parallel", "parallel"],
                          [("%e", sty), ("%escore", sty)], [(b.empty(ne, sty), sty)],
                          body, sty)
    else:
        score = b.generic(["(d0, d1) -> (d0, d1)"] * 2, ["parallel", "parallel"],
                          [("%e", sty)], [(b.empty(ne, sty), sty)],
                          lambda v, o: _leaky(b, v, negative_slope), sty)
    agg, _, alpha = _softmax_aggregate(b, score, "%h", heads, channels, masked, dropout)
    args = [("%h", hty, None), ("%att_src", aty, None), ("%att_dst", aty, None)]
    if edge:
        args.append(("%escore", sty, _EDGE))
    args += _attention_args(t, heads, masked, dropout)
    results = [(agg, hty)] + ([(alpha, sty)] if weights else [])
    return b.function("gat", args, results), "gat"


@functools.lru_cache(maxsize=None)
def gatv2(heads: int, channels: int, dtype: str, negative_slope: float,
          masked: bool, dropout: bool, weights: bool = False, edge: bool = False):
    """GATv2 attention: ``alpha = softmax_i(att . leaky_relu(l_j + r_i [+ f_ji]))``,
    ``out_i = sum_j alpha_ji l_j`` -> [N, H, C]. With ``edge``, the edge
    argument ``%eproj`` [E, H, C] holds the projected edge features ``W_e e_ji``."""
    t = _elem(dtype)
    b = _Builder(t)
    hty = f"tensor<?x{heads}x{channels}x{t}>"
    aty = f"tensor<{heads}x{channels}x{t}>"
    sty = f"tensor<?x{heads}x{t}>"
    b.emit(f"%e = gnn.sddmm add %g, %l, %r : {hty}, {hty} -> {hty}")
    ne = b.dim0("%e", hty)
    id3 = "(d0, d1, d2) -> (d0, d1, d2)"
    maps = [id3, "(d0, d1, d2) -> (d1, d2)", "(d0, d1, d2) -> (d0, d1)"]
    ins = [("%e", hty), ("%att", aty)]
    if edge:
        maps = [id3] + maps
        ins = [("%e", hty), ("%eproj", hty), ("%att", aty)]

    def body(*block):
        o, a = block[-1], block[-2]
        pre = []
        v = block[0]
        if edge:
            pre, v = [f"%sum = arith.addf {block[0]}, {block[1]} : {t}"], "%sum"
        lines, lr = _leaky(b, v, negative_slope)
        return (pre + lines + [f"%m = arith.mulf {lr}, {a} : {t}",
                               f"%s = arith.addf {o}, %m : {t}"], "%s")

    score = b.generic(maps, ["parallel", "parallel", "reduction"], ins,
                      [(b.zeros(ne, sty), sty)], body, sty)
    agg, _, alpha = _softmax_aggregate(b, score, "%l", heads, channels, masked, dropout)
    args = [("%l", hty, None), ("%r", hty, None), ("%att", aty, None)]
    if edge:
        args.append(("%eproj", hty, _EDGE))
    args += _attention_args(t, heads, masked, dropout)
    results = [(agg, hty)] + ([(alpha, sty)] if weights else [])
    return b.function("gatv2", args, results), "gatv2"


@functools.lru_cache(maxsize=None)
def transformer(heads: int, channels: int, dtype: str, masked: bool, dropout: bool,
                weights: bool = False, edge: bool = False):
    """Graph Transformer attention:
    ``alpha = softmax_i(q_i . (k_j [+ f_ji]) / sqrt(C))``,
    ``out_i = sum_j alpha_ji (v_j [+ f_ji])``. With ``edge``, the edge argument
    ``%eproj`` [E, H, C] holds the projected edge features ``W_e e_ji``."""
    t = _elem(dtype)
    b = _Builder(t)
    hty = f"tensor<?x{heads}x{channels}x{t}>"
    sty = f"tensor<?x{heads}x{t}>"
    root = b.const(_float(math.sqrt(channels)))
    b.emit(f"%dot = gnn.sddmm dot %g, %k, %q : {hty}, {hty} -> {sty}")
    ne = b.dim0("%dot", sty)
    id2 = "(d0, d1) -> (d0, d1)"
    if edge:
        # q_i . f_ji: the destination's query on every edge, dotted per head.
        b.emit(f"%qd = gnn.gather dst %g, %q : {hty} -> {hty}")
        qf = b.generic(["(d0, d1, d2) -> (d0, d1, d2)"] * 2 + ["(d0, d1, d2) -> (d0, d1)"],
                       ["parallel", "parallel", "reduction"],
                       [("%qd", hty), ("%eproj", hty)], [(b.zeros(ne, sty), sty)],
                       lambda q, f, o: ([f"%m = arith.mulf {q}, {f} : {t}",
                                         f"%s = arith.addf {o}, %m : {t}"], "%s"), sty)
        score = b.generic([id2] * 3, ["parallel", "parallel"],
                          [("%dot", sty), (qf, sty)], [(b.empty(ne, sty), sty)],
                          lambda v, w, o: ([f"%a = arith.addf {v}, {w} : {t}",
                                            f"%s = arith.divf %a, {root} : {t}"], "%s"), sty)
    else:
        score = b.generic([id2] * 2, ["parallel", "parallel"],
                          [("%dot", sty)], [(b.empty(ne, sty), sty)],
                          lambda v, o: ([f"%s = arith.divf {v}, {root} : {t}"], "%s"), sty)
    agg, softmax, alpha = _softmax_aggregate(b, score, "%v", heads, channels, masked,
                                             dropout)
    out = agg
    if edge:
        # sum_j alpha_ji f_ji: the edge features' share of the values.
        msg = b.generic(["(d0, d1, d2) -> (d0, d1)", "(d0, d1, d2) -> (d0, d1, d2)",
                         "(d0, d1, d2) -> (d0, d1, d2)"], ["parallel"] * 3,
                        [(alpha, sty), ("%eproj", hty)], [(b.empty(ne, hty), hty)],
                        lambda a, f, o: ([f"%m = arith.mulf {a}, {f} : {t}"], "%m"), hty)
        b.emit(f"%fsum = gnn.reduce sum %g, {msg} : {hty} -> {hty}")
        n = b.dim0("%q", hty)
        out = b.generic(["(d0, d1, d2) -> (d0, d1, d2)"] * 3, ["parallel"] * 3,
                        [(agg, hty), ("%fsum", hty)], [(b.empty(n, hty), hty)],
                        lambda u, w, o: ([f"%s = arith.addf {u}, {w} : {t}"], "%s"), hty)
    args = [("%q", hty, None), ("%k", hty, None), ("%v", hty, None)]
    if edge:
        args.append(("%eproj", hty, _EDGE))
    args += _attention_args(t, heads, masked, dropout)
    # PyG's TransformerConv returns the weights before dropout.
    results = [(out, hty)] + ([(softmax, sty)] if weights else [])
    return b.function("transformer", args, results), "transformer"


@functools.lru_cache(maxsize=None)
def agnn(channels: int, dtype: str, masked: bool):
    """AGNN propagation over x [N, 1, F] (one head):
    ``n_i = x_i / max(||x_i||, 1e-12)``, ``alpha = softmax_i(beta * n_i . n_j)``,
    ``out_i = sum_j alpha_ji x_j`` -> [N, 1, F]."""
    t = _elem(dtype)
    b = _Builder(t)
    xty = f"tensor<?x1x{channels}x{t}>"
    sty = f"tensor<?x1x{t}>"
    n = b.dim0("%x", xty)
    tiny = b.const(_float(1e-12))
    sq = b.generic(["(d0, d1, d2) -> (d0, d1, d2)", "(d0, d1, d2) -> (d0, d1)"],
                   ["parallel", "parallel", "reduction"],
                   [("%x", xty)], [(b.zeros(n, sty), sty)],
                   lambda v, o: ([f"%m = arith.mulf {v}, {v} : {t}",
                                  f"%s = arith.addf {o}, %m : {t}"], "%s"), sty)
    xn = b.generic(["(d0, d1, d2) -> (d0, d1, d2)", "(d0, d1, d2) -> (d0, d1)",
                    "(d0, d1, d2) -> (d0, d1, d2)"],
                   ["parallel", "parallel", "parallel"], [("%x", xty), (sq, sty)],
                   [(b.empty(n, xty), xty)],
                   lambda v, s, o: ([f"%norm = math.sqrt {s} : {t}",
                                     f"%d = arith.maximumf %norm, {tiny} : {t}",
                                     f"%r = arith.divf {v}, %d : {t}"], "%r"), xty)
    b.emit(f"%cos = gnn.sddmm dot %g, {xn}, {xn} : {xty}, {xty} -> {sty}")
    ne = b.dim0("%cos", sty)
    score = b.generic(["(d0, d1) -> (d0, d1)", "(d0, d1) -> (0)", "(d0, d1) -> (d0, d1)"],
                      ["parallel", "parallel"],
                      [("%cos", sty), ("%beta", f"tensor<1x{t}>")],
                      [(b.empty(ne, sty), sty)],
                      lambda c, be, o: ([f"%s = arith.mulf {be}, {c} : {t}"], "%s"), sty)
    out, _, _ = _softmax_aggregate(b, score, "%x", 1, channels, masked, False)
    args = [("%x", xty, None), ("%beta", f"tensor<1x{t}>", None)]
    args += _attention_args(t, 1, masked, False)
    return b.function("agnn", args, [(out, xty)]), "agnn"
