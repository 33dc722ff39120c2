"""The graph part of the `gnnc.nn` layers, built with `gnnc.ir`.

Each function returns ``(module, name)``: one `gnn`-dialect function, built
op by op through the compiler's own builders (`gnnc.ir`, no IR text) for one
layer configuration (channels, heads, element type, flags), that
`gnnc.compile` turns into forward and backward kernels. The dense projections
(`x W^T + b`) stay in PyTorch; what runs here is everything that touches the
graph: scores on edges (`gnn.sddmm`), their softmax (`gnn.edge_softmax`), the
aggregation (`gnn.spmm`) and the degree normalisation, plus the elementwise work
between them, so the compiler can fuse it all.

Conventions shared by the templates:

- ``keep`` (an edge tensor of 0/1 values, ``edge=True``) masks the
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

The built module is deterministic, so `gnnc.compile`'s cache (keyed by its
printed form) sees the same module for the same configuration; the layers
keep the compiled function per configuration (`_common._FUNCTIONS`).
"""

import math

from .. import ir
from ..ir import Const, rsqrt, select, sqrt

__all__ = [
    "gcn", "sage", "gin", "gat", "gatv2", "transformer", "agnn",
]

_P, _R = "parallel", "reduction"


def _builder(name: str, dtype: str) -> ir.Builder:
    if dtype not in ("f32", "f64"):
        raise ValueError(f"expected element type 'f32' or 'f64', got {dtype!r}")
    return ir.Builder(name, dtype)


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError(f"expected a finite constant, got {value}")
    return float(value)


def _leaky(f: ir.Builder, v, slope: float):
    """leaky_relu(v) inside a body."""
    zero, s = f.const(0.0), f.const(_finite(slope))
    neg = v * s
    pos = v > zero
    return select(pos, v, neg)


def _masks(f: ir.Builder, heads: int, masked: bool, dropout: bool):
    """The ``keep`` [E] and ``drop`` [E, heads] arguments (no gradient)."""
    keep = f.arg([None], edge=True, differentiable=False) if masked else None
    drop = f.arg([None, heads], edge=True, differentiable=False) if dropout else None
    return keep, drop


def _mask_scores(f: ir.Builder, score, keep, rows, heads: int):
    """score[e, h] where keep[e] > 0.5, else -inf (weight 0 after the softmax)."""
    half, ninf = f.const(0.5), f.const(-math.inf)
    out = f.empty([None, heads], rows)
    return f.generic([(0, 1), (0,), (0, 1)], [_P, _P], [score, keep], [out],
                     lambda s, k, o: select(k > half, s, ninf))


def _softmax_aggregate(f: ir.Builder, score, feats, heads: int, keep, drop):
    """edge_softmax of score [E, H] (masked by ``keep``, dropped out by
    ``drop``) weighting feats [N, H, C]. Returns (aggregate, softmax
    weights, weights after dropout)."""
    rows = f.dim(score)
    if keep is not None:
        score = _mask_scores(f, score, keep, rows, heads)
    alpha = f.edge_softmax(score)
    softmax = alpha
    if drop is not None:
        alpha = f.generic([(0, 1)] * 3, [_P, _P], [alpha, drop],
                          [f.empty([None, heads], rows)], lambda a, m, o: a * m)
    agg = f.spmm("sum", feats, weights=alpha)
    return agg, softmax, alpha


def gcn(channels: int, dtype: str, normalize: bool, weighted: bool):
    """GCN propagation of h = x W^T [N, C].

    - ``normalize=False``: ``out_i = sum_{e: j -> i} w_e h_j``.
    - ``normalize=True``: ``out_i = sum_{e: j -> i} w_e d_j^-1/2 d_i^-1/2 h_j``
      with ``d_i = sum_{e -> i} w_e`` and ``d^-1/2 = 0`` where ``d = 0`` (PyG's
      gcn_norm); ``w_e`` is the edge argument ``w`` when ``weighted`` (the graph
      then carries the self-loops PyG adds), else 1.
    """
    f = _builder("gcn", dtype)
    h = f.arg([None, channels])
    w = f.arg([None], edge=True) if weighted else None
    if not normalize:
        return f.finish(f.spmm("sum", h, weights=w)), "gcn"
    deg = f.reduce("sum", w) if weighted else f.degree()
    n = f.dim(h)
    zero = f.const(0.0)
    dinv = f.generic([(0,), (0,)], [_P], [deg], [f.empty([None], n)],
                     lambda d, o: select(d != zero, rsqrt(d), zero))
    rows = [(0, 1), (0,), (0, 1)]
    hs = f.generic(rows, [_P, _P], [h, dinv], [f.empty([None, channels], n)],
                   lambda v, d, o: v * d)
    agg = f.spmm("sum", hs, weights=w)
    out = f.generic(rows, [_P, _P], [agg, dinv], [f.empty([None, channels], n)],
                    lambda v, d, o: v * d)
    return f.finish(out), "gcn"


def sage(channels: int, dtype: str, aggr: str):
    """SAGE neighbourhood aggregation: ``out_i = aggr_{j -> i} x_j`` (0 when none)."""
    if aggr not in ("sum", "mean", "max", "min"):
        raise ValueError(f"unsupported aggregation {aggr!r}")
    name = f"sage_{aggr}"
    f = _builder(name, dtype)
    x = f.arg([None, channels])
    return f.finish(f.spmm(aggr, x)), name


def gin(channels: int, dtype: str):
    """GIN aggregation: ``out_i = (1 + eps) x_i + sum_{j -> i} x_j``."""
    f = _builder("gin", dtype)
    x = f.arg([None, channels])
    eps = f.arg([1])
    one = f.const(1.0)
    agg = f.spmm("sum", x)
    n = f.dim(x)
    out = f.generic([(0, 1), (0, 1), (Const(0),), (0, 1)], [_P, _P], [x, agg, eps],
                    [f.empty([None, channels], n)],
                    lambda v, a, e, o: (one + e) * v + a)
    return f.finish(out), "gin"


def _head_dot(f: ir.Builder, h, att, n, heads: int):
    """s[n, h] = sum_c h[n, h, c] * att[h, c]."""
    return f.generic([(0, 1, 2), (1, 2), (0, 1)], [_P, _P, _R], [h, att],
                     [f.zeros([None, heads], n)], lambda v, a, o: o + v * a)


def gat(heads: int, channels: int, dtype: str, negative_slope: float,
        masked: bool, dropout: bool, weights: bool = False, edge: bool = False):
    """GAT attention over h [N, H, C]:
    ``alpha = softmax_i(leaky_relu(att_src . h_j + att_dst . h_i [+ s_ji]))``,
    ``out_i = sum_j alpha_ji h_j`` -> [N, H, C]. With ``edge``, the edge
    argument ``escore`` [E, H] holds the edge features' score term
    ``att_edge . W_e e_ji``."""
    f = _builder("gat", dtype)
    h = f.arg([None, heads, channels])
    att_src = f.arg([heads, channels])
    att_dst = f.arg([heads, channels])
    escore = f.arg([None, heads], edge=True) if edge else None
    keep, drop = _masks(f, heads, masked, dropout)
    n = f.dim(h)
    a_src = _head_dot(f, h, att_src, n, heads)
    a_dst = _head_dot(f, h, att_dst, n, heads)
    e = f.sddmm("add", a_src, a_dst)
    ne = f.dim(e)
    if edge:
        score = f.generic([(0, 1)] * 3, [_P, _P], [e, escore],
                          [f.empty([None, heads], ne)],
                          lambda v, es, o: _leaky(f, v + es, negative_slope))
    else:
        score = f.generic([(0, 1)] * 2, [_P, _P], [e], [f.empty([None, heads], ne)],
                          lambda v, o: _leaky(f, v, negative_slope))
    agg, _, alpha = _softmax_aggregate(f, score, h, heads, keep, drop)
    return f.finish(agg, *([alpha] if weights else [])), "gat"


def gatv2(heads: int, channels: int, dtype: str, negative_slope: float,
          masked: bool, dropout: bool, weights: bool = False, edge: bool = False):
    """GATv2 attention: ``alpha = softmax_i(att . leaky_relu(l_j + r_i [+ f_ji]))``,
    ``out_i = sum_j alpha_ji l_j`` -> [N, H, C]. With ``edge``, the edge
    argument ``eproj`` [E, H, C] holds the projected edge features ``W_e e_ji``."""
    f = _builder("gatv2", dtype)
    l = f.arg([None, heads, channels])
    r = f.arg([None, heads, channels])
    att = f.arg([heads, channels])
    eproj = f.arg([None, heads, channels], edge=True) if edge else None
    keep, drop = _masks(f, heads, masked, dropout)
    e = f.sddmm("add", l, r)
    ne = f.dim(e)
    id3 = (0, 1, 2)
    maps = [id3, (1, 2), (0, 1)]
    ins = [e, att]
    if edge:
        maps = [id3] + maps
        ins = [e, eproj, att]

    def body(*block):
        o, a = block[-1], block[-2]
        v = block[0] + block[1] if edge else block[0]
        return o + _leaky(f, v, negative_slope) * a

    score = f.generic(maps, [_P, _P, _R], ins, [f.zeros([None, heads], ne)], body)
    agg, _, alpha = _softmax_aggregate(f, score, l, heads, keep, drop)
    return f.finish(agg, *([alpha] if weights else [])), "gatv2"


def transformer(heads: int, channels: int, dtype: str, masked: bool, dropout: bool,
                weights: bool = False, edge: bool = False):
    """Graph Transformer attention:
    ``alpha = softmax_i(q_i . (k_j [+ f_ji]) / sqrt(C))``,
    ``out_i = sum_j alpha_ji (v_j [+ f_ji])``. With ``edge``, the edge argument
    ``eproj`` [E, H, C] holds the projected edge features ``W_e e_ji``."""
    f = _builder("transformer", dtype)
    hc = [None, heads, channels]
    q, k, v = f.arg(hc), f.arg(hc), f.arg(hc)
    eproj = f.arg(hc, edge=True) if edge else None
    keep, drop = _masks(f, heads, masked, dropout)
    root = f.const(math.sqrt(channels))
    dot = f.sddmm("dot", k, q)
    ne = f.dim(dot)
    id2, id3 = (0, 1), (0, 1, 2)
    if edge:
        # q_i . f_ji: the destination's query on every edge, dotted per head.
        qd = f.gather("dst", q)
        qf = f.generic([id3, id3, (0, 1)], [_P, _P, _R], [qd, eproj],
                       [f.zeros([None, heads], ne)], lambda a, b, o: o + a * b)
        score = f.generic([id2] * 3, [_P, _P], [dot, qf], [f.empty([None, heads], ne)],
                          lambda a, b, o: (a + b) / root)
    else:
        score = f.generic([id2] * 2, [_P, _P], [dot], [f.empty([None, heads], ne)],
                          lambda a, o: a / root)
    agg, softmax, alpha = _softmax_aggregate(f, score, v, heads, keep, drop)
    out = agg
    if edge:
        # sum_j alpha_ji f_ji: the edge features' share of the values.
        msg = f.generic([(0, 1), id3, id3], [_P] * 3, [alpha, eproj],
                        [f.empty(hc, ne)], lambda a, b, o: a * b)
        fsum = f.reduce("sum", msg)
        n = f.dim(q)
        out = f.generic([id3] * 3, [_P] * 3, [agg, fsum], [f.empty(hc, n)],
                        lambda a, b, o: a + b)
    # PyG's TransformerConv returns the weights before dropout.
    return f.finish(out, *([softmax] if weights else [])), "transformer"


def agnn(channels: int, dtype: str, masked: bool):
    """AGNN propagation over x [N, 1, F] (one head):
    ``n_i = x_i / max(||x_i||, 1e-12)``, ``alpha = softmax_i(beta * n_i . n_j)``,
    ``out_i = sum_j alpha_ji x_j`` -> [N, 1, F]."""
    f = _builder("agnn", dtype)
    x = f.arg([None, 1, channels])
    beta = f.arg([1])
    keep, _ = _masks(f, 1, masked, False)
    n = f.dim(x)
    tiny = f.const(1e-12)
    id3 = (0, 1, 2)
    sq = f.generic([id3, (0, 1)], [_P, _P, _R], [x], [f.zeros([None, 1], n)],
                   lambda v, o: o + v * v)
    xn = f.generic([id3, (0, 1), id3], [_P, _P, _P], [x, sq],
                   [f.empty([None, 1, channels], n)],
                   lambda v, s, o: v / ir.maximum(sqrt(s), tiny))
    cos = f.sddmm("dot", xn, xn)
    ne = f.dim(cos)
    score = f.generic([(0, 1), (Const(0),), (0, 1)], [_P, _P], [cos, beta],
                      [f.empty([None, 1], ne)], lambda c, b, o: b * c)
    out, _, _ = _softmax_aggregate(f, score, x, 1, keep, None)
    return f.finish(out), "agnn"
