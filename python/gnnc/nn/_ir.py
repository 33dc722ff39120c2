"""The graph part of the `gnnc.nn` layers, built with `gnnc.ir`.

Each function returns ``(module, name)``: one `gnn`-dialect function, built
op by op through the compiler's own builders (`gnnc.ir`, no IR text) for one
layer configuration (channels, heads, element type, flags), that
`gnnc.compile` turns into forward and backward kernels. What runs here is
everything that touches the graph: scores on edges (`gnn.sddmm`), their
softmax (`gnn.edge_softmax`), the aggregation (`gnn.spmm`) and the degree
normalisation, plus the elementwise work between them, so the compiler can
fuse it all. The ``*_layer`` templates and ``gcn_model`` (of `gnnc.nn.GCN`)
are whole layers: their dense projections (`x W^T + b`), biases and
activations are in the function too, so a layer call is one op forward and
one backward; elsewhere the projections stay in PyTorch.

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
  heads happens in PyTorch (a view or a mean), except in
  ``transformer_layer`` with its skip (the layer's ``[N, heads * C]``). With ``weights=True`` the
  attention templates also return the attention coefficients ``[E, heads]``
  (for ``return_attention_weights``).

Each layer is written once, as a *propagation* over values of a builder
(``gcn_propagate``, ``gat_attention``, ...): the templates below wrap it
into the function a layer runs, and `_examples.py` wraps the same
propagation with the dense projections into the whole layers of
``examples/*.mlir``.

The built module is deterministic, so `gnnc.compile`'s cache (keyed by its
printed form) sees the same module for the same configuration; the layers
keep the compiled function per configuration (`_common._FUNCTIONS`).
"""

import math
import threading
from typing import Optional

from .. import ir
from ..ir import Const, rsqrt, select, sqrt

__all__ = [
    "gcn", "gcn_model", "sage", "sage_layer", "gin", "gin_layer", "gine", "gine_layer",
    "gine_pair", "gat_layer", "gat_pair", "gatv2", "gatv2_layer", "transformer",
    "transformer_layer", "agnn", "rgcn",
]

_P, _R = "parallel", "reduction"


class _Builder(ir.Builder):
    """An ir.Builder whose arguments at the positions in ``frozen`` (0: the
    first after the graph) get no gradient, whatever the template says;
    whose arguments at the positions in ``stored`` ({position: element
    type}) are stored in that type and converted to the function's where
    they are declared (under torch.autocast a layer's float32 parameters
    and features enter its bfloat16 function as they are: their conversion
    runs on the device inside the op, and their gradients come back in
    float32, as autocast's own casts would give them); and whose results
    at the positions in ``results`` ({position: element type}) are
    converted to that type on return (PyG's float32 result of a layer that
    adds a float32 bias under autocast)."""

    def __init__(self, name: str, dtype: str, frozen: tuple, bipartite: bool = False,
                 typed: bool = False, stored: Optional[dict] = None,
                 results: Optional[dict] = None):
        super().__init__(name, dtype, bipartite, typed)
        self._frozen = frozen
        self._stored = stored or {}
        self._results = results or {}
        self._args = 0

    def arg(self, shape, *, edge: bool = False, side: Optional[str] = None,
            differentiable: bool = True, name: Optional[str] = None, dtype=None):
        i, self._args = self._args, self._args + 1
        stored = self._stored.get(i)
        # (a template's own `dtype` stands where the caller stores none)
        v = super().arg(shape, edge=edge, side=side, name=name, dtype=stored or dtype,
                        differentiable=differentiable and i not in self._frozen)
        return v if stored is None else self.convert(v)

    def finish(self, *results):
        if self._results:
            results = tuple(self.convert(r, self._results[i]) if i in self._results else r
                            for i, r in enumerate(results))
        return super().finish(*results)


_STATE = threading.local()


def build(template: str, config: tuple, frozen: tuple = (), stored: tuple = (),
          results: tuple = ()):
    """``template(*config)`` (a function of this module) with the arguments at
    the positions in ``frozen`` built without a gradient: a layer's caller
    that needs no gradient for an input (a first layer's features) gets a
    backward that computes none (no ``dx`` matmul and transposed
    aggregation over the graph). ``stored``: (position, element type)
    pairs of arguments stored in another type than the function's;
    ``results``: (position, element type) pairs of results returned in
    another type (`_Builder`)."""
    _STATE.frozen, _STATE.stored, _STATE.results = tuple(frozen), dict(stored), dict(results)
    try:
        return globals()[template](*config)
    finally:
        _STATE.frozen, _STATE.stored, _STATE.results = (), {}, {}


def _builder(name: str, dtype: str, bipartite: bool = False,
             typed: bool = False) -> ir.Builder:
    """A function of ``dtype`` on a graph (``bipartite``: a bipartite graph,
    whose node arguments say their side; ``typed``: its edges carry relation
    ids)."""
    if dtype not in ("f32", "f64", "bf16", "f16"):
        raise ValueError(f"expected element type 'f32', 'f64', 'bf16' or 'f16', got "
                         f"{dtype!r}")
    return _Builder(name, dtype, getattr(_STATE, "frozen", ()), bipartite, typed,
                    getattr(_STATE, "stored", None), getattr(_STATE, "results", None))


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
    keep = f.arg([None], edge=True, differentiable=False, name="keep") if masked else None
    drop = (f.arg([None, heads], edge=True, differentiable=False, name="drop")
            if dropout else None)
    return keep, drop


def _mask_scores(f: ir.Builder, score, keep, rows, heads):
    """score[e(, h)] where keep[e] > 0.5, else -inf (weight 0 after the
    softmax); ``heads`` None for scores [E]."""
    half, ninf = f.const(0.5), f.const(-math.inf)
    if heads is None:
        out = f.empty([None], rows)
        maps, iters = [(0,), (0,), (0,)], [_P]
    else:
        out = f.empty([None, heads], rows)
        maps, iters = [(0, 1), (0,), (0, 1)], [_P, _P]
    return f.generic(maps, iters, [score, keep], [out],
                     lambda s, k, o: select(k > half, s, ninf), name="masked")


def _softmax_aggregate(f: ir.Builder, score, feats, heads, keep, drop):
    """edge_softmax of score [E, H] (or [E] with ``heads`` None; masked by
    ``keep``, dropped out by ``drop``) weighting feats [N, H, C] (or [N, F]).
    Returns (aggregate, softmax weights, weights after dropout)."""
    rows = f.dim(score, name="ne")
    if keep is not None:
        score = _mask_scores(f, score, keep, rows, heads)
    alpha = f.edge_softmax(score, name="alpha")
    softmax = alpha
    if drop is not None:
        alpha = f.generic([(0, 1)] * 3, [_P, _P], [alpha, drop],
                          [f.empty([None, heads], rows)], lambda a, m, o: a * m,
                          name="dropped")
    agg = f.spmm("sum", feats, weights=alpha, name="agg")
    return agg, softmax, alpha


def gcn_norm(f: ir.Builder, like, w=None, fold_self_loops: bool = False):
    """GCN's ``d^-1/2`` [N] (PyG's gcn_norm) and the node count of ``like``
    (a node tensor): ``d_i = sum_{e -> i} w_e`` (the in-degree without ``w``),
    ``d^-1/2 = 0`` where ``d = 0``; with ``fold_self_loops`` (unweighted)
    ``d_i = in-degree(i) + 1``, the self-loop counted but not in the graph.
    Returns (dinv, n)."""
    deg = f.reduce("sum", w, name="deg") if w is not None else f.degree(name="deg")
    n = f.dim(like, name="n")
    if fold_self_loops:
        one = f.const(1.0, name="one")
        dinv = f.generic([(0,), (0,)], [_P], [deg], [f.empty([None], n)],
                         lambda d, o: rsqrt(d + one), name="dinv")
    else:
        zero = f.const(0.0, name="zero")
        dinv = f.generic([(0,), (0,)], [_P], [deg], [f.empty([None], n)],
                         lambda d, o: select(d != zero, rsqrt(d), zero), name="dinv")
    return dinv, n


def gcn_scaled_sum(f: ir.Builder, h, dinv, n, w=None):
    """``hs = d^-1/2 h`` and ``agg_i = sum_{e: j -> i} w_e hs_j`` (w_e = 1
    without ``w``). Returns (hs, agg)."""
    hs = f.generic([(0, 1), (0,), (0, 1)], [_P, _P], [h, dinv],
                   [f.empty([None, h.shape[1]], n)], lambda v, d, o: v * d, name="hs")
    return hs, f.spmm("sum", hs, weights=w, name="agg")


def gcn_propagate(f: ir.Builder, h, w=None, normalize: bool = True,
                  fold_self_loops: bool = False):
    """GCN propagation of h = x W^T [N, C].

    - ``normalize=False``: ``out_i = sum_{e: j -> i} w_e h_j``.
    - ``normalize=True``: ``out_i = sum_{e: j -> i} w_e d_j^-1/2 d_i^-1/2 h_j``
      with ``d_i = sum_{e -> i} w_e`` and ``d^-1/2 = 0`` where ``d = 0`` (PyG's
      gcn_norm); ``w_e`` is the edge tensor ``w`` when given (the graph then
      carries the self-loops PyG adds), else 1.
    - ``fold_self_loops=True`` (unweighted, normalized): one self-loop per
      node folded into the formula instead of the graph,
      ``out_i = d_i^-1/2 (sum_{j -> i} d_j^-1/2 h_j + d_i^-1/2 h_i)`` with
      ``d_i = in-degree(i) + 1``.
    """
    channels = h.shape[1]
    if not normalize:
        return f.spmm("sum", h, weights=w, name="out")
    dinv, n = gcn_norm(f, h, w, fold_self_loops)
    hs, agg = gcn_scaled_sum(f, h, dinv, n, w)
    if fold_self_loops:
        return f.generic([(0, 1), (0, 1), (0,), (0, 1)], [_P, _P], [agg, hs, dinv],
                         [f.empty([None, channels], n)],
                         lambda a, s, d, o: (a + s) * d, name="out")
    return f.generic([(0, 1), (0,), (0, 1)], [_P, _P], [agg, dinv],
                     [f.empty([None, channels], n)],
                     lambda v, d, o: v * d, name="out")


def gcn(channels: int, dtype: str, normalize: bool, weighted: bool,
        bipartite: bool = False):
    """The function of `GCNConv`: ``gcn_propagate`` of the argument ``h``
    (and the edge weights ``w`` when ``weighted``). ``bipartite`` (without
    ``normalize``): on a bipartite graph, the sources' rows ``h`` weighted
    into the destinations'."""
    if bipartite and normalize:
        raise ValueError("GCN's normalisation reads one node set's degrees")
    f = _builder("gcn", dtype, bipartite)
    h = f.arg([None, channels], side="src" if bipartite else None, name="h")
    w = f.arg([None], edge=True, name="w") if weighted else None
    return f.finish(gcn_propagate(f, h, w, normalize)), "gcn"


def gcn_stack(f: ir.Builder, x, layers, w=None, normalize: bool = True,
              fold_self_loops: bool = False, relu: bool = True, drops=None):
    """A stack of GCN layers over x [N, C_0] (PyG's ``models.GCN``), each
    ``out = gcn_propagate(h W^T) + b`` with W [C_out, C_in] (PyG's
    ``lin.weight`` as stored: the matmul transposes it, no copy),
    then (all but the last layer) ReLU when ``relu`` and the dropout mask
    ``drops[i]`` [N, C_out] when given. ``layers``: (W, b or None) per
    layer; ``w``, ``normalize``, ``fold_self_loops`` as in ``gcn_propagate``.
    ``d^-1/2`` is computed once for all layers."""
    dinv, n = gcn_norm(f, x, w, fold_self_loops) if normalize else (None, f.dim(x, name="n"))
    zero = f.const(0.0) if relu and len(layers) > 1 else None
    h = x
    for i, (weight, bias) in enumerate(layers):
        c = weight.shape[0]
        last = i == len(layers) - 1
        y = f.matmul(h, weight, f.zeros([None, c], n), transpose_rhs=True, name=f"y{i}")
        # out = sum (+ self) (* dinv) (+ b), then relu and the mask: one
        # elementwise op reading the aggregate and its operands.
        if normalize:
            hs, agg = gcn_scaled_sum(f, y, dinv, n, w)
            ins, maps = [agg], [(0, 1)]
            if fold_self_loops:
                ins, maps = ins + [hs], maps + [(0, 1)]
            ins, maps = ins + [dinv], maps + [(0,)]
        else:
            ins, maps = [f.spmm("sum", y, weights=w, name=f"agg{i}")], [(0, 1)]
        if bias is not None:
            ins, maps = ins + [bias], maps + [(1,)]
        drop = None if last or drops is None else drops[i]
        if drop is not None:
            ins, maps = ins + [drop], maps + [(0, 1)]

        def body(*v, bias=bias, drop=drop, last=last):
            v = list(v[:-1])
            out = v.pop(0)
            if normalize:
                if fold_self_loops:
                    out = out + v.pop(0)
                out = out * v.pop(0)
            if bias is not None:
                out = out + v.pop(0)
            if relu and not last:
                # 0 where out <= 0 (as torch.relu, its gradient 0 at 0); NaN
                # stays NaN.
                out = select(out <= zero, zero, out)
            if drop is not None:
                out = out * v.pop(0)
            return out

        h = f.generic(maps + [(0, 1)], [_P, _P], ins, [f.empty([None, c], n)], body,
                      name=f"h{i}")
    return h


def gcn_model(channels: tuple, dtype: str, bias: bool, relu: bool,
              weights: Optional[str], normalize: bool, fold_self_loops: bool,
              dropout: bool):
    """The function of `models.GCN`: ``gcn_stack`` over layers of
    ``channels[i] -> channels[i + 1]``. Arguments: ``x``, then per layer
    ``w<i>`` [C_out, C_in] (PyG's ``lin.weight``) and (``bias``) ``b<i>``
    [C_out], then the edge tensor ``w`` (``weights="weight"``: edge
    weights, differentiable) or ``keep`` (``weights="mask"``: 0 on the
    input's self-loops, no gradient), none for ``weights`` "" (or None),
    then (``dropout``) one mask ``drop<i>`` [N, C_out] per hidden layer."""
    if len(channels) < 2:
        raise ValueError(f"expected at least one layer, got channels {channels}")
    f = _builder("gcn_model", dtype)
    x = f.arg([None, channels[0]], name="x")
    layers = []
    for i in range(len(channels) - 1):
        weight = f.arg([channels[i + 1], channels[i]], name=f"w{i}")
        layers.append((weight, f.arg([channels[i + 1]], name=f"b{i}") if bias else None))
    w = None
    if weights == "weight":
        w = f.arg([None], edge=True, name="w")
    elif weights == "mask":
        w = f.arg([None], edge=True, differentiable=False, name="keep")
    elif weights not in (None, ""):
        raise ValueError(f"expected weights '' (none), 'weight' or 'mask', got {weights!r}")
    drops = None
    if dropout:
        drops = [f.arg([None, c], differentiable=False, name=f"drop{i}")
                 for i, c in enumerate(channels[1:-1])]
    out = gcn_stack(f, x, layers, w, normalize, fold_self_loops, relu, drops)
    return f.finish(out), "gcn_model"


def sage_aggregate(f: ir.Builder, x, aggr: str):
    """SAGE neighbourhood aggregation: ``out_i = aggr_{j -> i} x_j`` (0 when none)."""
    if aggr not in ("sum", "mean", "max", "min"):
        raise ValueError(f"unsupported aggregation {aggr!r}")
    return f.spmm(aggr, x, name="agg")


def sage(channels: int, dtype: str, aggr: str, bipartite: bool = False):
    """``sage_aggregate`` of ``x``; ``bipartite``: on a bipartite graph, the
    sources' rows ``x`` aggregated into the destinations' rows."""
    if aggr not in ("sum", "mean", "max", "min"):
        raise ValueError(f"unsupported aggregation {aggr!r}")
    name = f"sage_{aggr}" + ("_bipartite" if bipartite else "")
    f = _builder(name, dtype, bipartite)
    x = f.arg([None, channels], side="src" if bipartite else None, name="x")
    return f.finish(sage_aggregate(f, x, aggr)), name


def sage_layer(in_channels: int, out_channels: int, dtype: str, aggr: str,
               bias: bool, root: bool, project_first: bool, separate_root: bool = False,
               bipartite: bool = False, root_channels: int = 0):
    """The function of `SAGEConv`, the whole layer:
    ``out_i = W_l^T aggr_{j -> i} x_j (+ b_l) (+ W_r^T x_i)``. Arguments:
    ``x`` [N, in], ``wl`` [out, in] (PyG's ``lin_l.weight`` as stored: the
    matmuls transpose it), then ``bl`` [out] when ``bias``, then ``wr``
    [out, in] (``lin_r.weight``) when
    ``root``, then (``separate_root``: PyG's ``project=True``, which
    aggregates ``relu(lin(x))`` passed as ``x``) the root term's own input
    ``xr`` [N, in]. ``project_first`` (a linear ``aggr``, sum or mean): the
    projection runs before the aggregation, which then moves ``out``
    features over the edges instead of ``in``; then a last argument ``wz``,
    ``wl`` again (no gradient: a NaN or an infinity in it reaches the nodes
    without in-edges, as PyG's ``0 @ W_l^T``). ``bipartite``: PyG's
    ``(x_src, x_dst)`` form on a bipartite graph, ``x`` the sources' rows
    and the root term's ``xr`` (then an argument with ``root``) the
    destinations' own (``root_channels`` features where PyG's
    ``in_channels=(in_src, in_dst)`` differ; 0: ``in_channels``); the
    result has the destinations' rows."""
    if aggr not in ("sum", "mean", "max", "min"):
        raise ValueError(f"unsupported aggregation {aggr!r}")
    if project_first and aggr not in ("sum", "mean"):
        raise ValueError(f"aggregation {aggr!r} does not commute with the projection")
    if bipartite and separate_root:
        raise ValueError("a bipartite layer's root term reads its own input")
    name = f"sage_{aggr}_layer" + ("_bipartite" if bipartite else "")
    f = _builder(name, dtype, bipartite)
    x = f.arg([None, in_channels], side="src" if bipartite else None, name="x")
    wl = f.arg([out_channels, in_channels], name="wl")
    bl = f.arg([out_channels], name="bl") if bias else None
    in_root = root_channels or in_channels
    wr = f.arg([out_channels, in_root], name="wr") if root else None
    if root and (separate_root or bipartite):
        xr = f.arg([None, in_root], side="dst" if bipartite else None, name="xr")
    else:
        xr = x
    # (project_first) W_l again, without a gradient: the term zl below.
    wz = f.arg([out_channels, in_channels], differentiable=False,
               name="wz") if project_first else None
    if not bipartite:
        n = n_src = f.dim(x, name="n")
    else:
        n_src = f.dim(x, name="n_src")
        if root:
            n = f.dim(xr, name="n")

    def aggregated():
        # The aggregate of x (project_first: of x W_l^T): destination rows.
        if not project_first:
            return sage_aggregate(f, x, aggr)
        return sage_aggregate(f, f.matmul(x, wl, f.zeros([None, out_channels], n_src),
                                          transpose_rhs=True, name="hl"), aggr)

    agg = None
    if bipartite and not root:
        # No destination tensor to size the terms by: the aggregate's rows.
        agg = aggregated()
        n = f.dim(agg, name="n")
    # The terms are summed by matmuls adding into the previous term (on CUDA
    # a GEMM with beta = 1, in place): the bias broadcast to every row (or
    # zeros), plus x_r W_r^T, plus the aggregate's product. No elementwise
    # pass over the terms, forward or backward.
    if bl is not None:
        acc = f.generic([(1,), (0, 1)], [_P, _P], [bl], [f.empty([None, out_channels], n)],
                        lambda b, _: b, name="bias")
    else:
        acc = f.zeros([None, out_channels], n, name="acc")
    if wr is not None:
        acc = f.matmul(xr, wr, acc, transpose_rhs=True, name="hr")
    if not project_first:
        agg = agg if agg is not None else aggregated()
        return f.finish(f.matmul(agg, wl, acc, transpose_rhs=True, name="out")), name
    # The projection first: the aggregate of x W_l^T, then one sum with the
    # other terms. PyG projects the aggregate: a destination without
    # in-edges gets 0 W_l^T, NaN in each column where W_l holds a NaN or an
    # infinity (0 * inf is NaN); projected first, its empty aggregate never
    # meets W_l. zl = sum_k 0 * W_l[c, k] (0, or NaN in those columns; a
    # reduction of W_l, no pass over the nodes) joins the sum. The rows with
    # in-edges are non-finite in those columns already (sums of x_j W_l^T),
    # as PyG's are. zl reads W_l's second, non-differentiable argument: no
    # backward (the 0 * dy it would add to W_l's gradient is left out).
    hl = agg if agg is not None else aggregated()
    zero = f.const(0.0, name="zero")
    zl = f.generic([(0, 1), (0,)], [_P, _R], [wz], [f.zeros([out_channels])],
                   lambda w, a: a + zero * w, name="zl")
    if bl is None and wr is None:
        out = f.generic([(0, 1), (1,), (0, 1)], [_P, _P], [hl, zl],
                        [f.empty([None, out_channels], n)], lambda h, z, _: h + z, name="out")
        return f.finish(out), name
    out = f.generic([(0, 1), (0, 1), (1,), (0, 1)], [_P, _P], [hl, acc, zl],
                    [f.empty([None, out_channels], n)], lambda h, a, z, _: h + a + z,
                    name="out")
    return f.finish(out), name


def _linear(f: ir.Builder, x, weight, bias, n, name: str):
    """``x weight^T (+ bias)`` [N, out] (``weight`` PyG's [out, in] as stored):
    the bias broadcast to every row, then the matmul adding into it (on CUDA
    one GEMM with the bias in its epilogue)."""
    out = weight.shape[0]
    if bias is not None:
        acc = f.generic([(1,), (0, 1)], [_P, _P], [bias], [f.empty([None, out], n)],
                        lambda b, _: b, name=f"{name}_bias")
    else:
        acc = f.zeros([None, out], n, name=f"{name}_acc")
    return f.matmul(x, weight, acc, transpose_rhs=True, name=name)


def _linear_args(f: ir.Builder, out: int, inp: int, bias: bool, name: str):
    """A linear map's arguments ``w<name>`` [out, in] (PyG's ``weight`` as
    stored) and, with ``bias``, ``b<name>`` [out] (else None)."""
    return (f.arg([out, inp], name=f"w{name}"),
            f.arg([out], name=f"b{name}") if bias else None)


def _linear_heads(f: ir.Builder, x, weight, bias, n, heads: int, name: str):
    """``_linear`` viewed as [N, heads, out / heads]."""
    return f.expand(_linear(f, x, weight, bias, n, f"{name}0"), [[0], [1, 2]],
                    [None, heads, weight.shape[0] // heads], n, name=name)


def _concat_plus_bias(f: ir.Builder, out, bias, n):
    """[N, H, C] -> ``concat_h(out) + bias`` [N, H * C]."""
    flat = f.collapse(out, [[0], [1, 2]], name="flat")
    return f.generic([(0, 1), (1,), (0, 1)], [_P, _P], [flat, bias],
                     [f.empty([None, flat.shape[1]], n)], lambda a, c, o: a + c, name="out")


def gin_propagate(f: ir.Builder, x, eps):
    """GIN aggregation: ``out_i = (1 + eps) x_i + sum_{j -> i} x_j`` (``eps`` a
    ``[1]`` tensor)."""
    one = f.const(1.0, name="one")
    agg = f.spmm("sum", x, name="agg")
    n = f.dim(x, name="n")
    return f.generic([(0, 1), (0, 1), (Const(0),), (0, 1)], [_P, _P], [x, agg, eps],
                     [f.empty([None, x.shape[1]], n)],
                     lambda v, a, e, o: (one + e) * v + a, name="out")


def gin(channels: int, dtype: str):
    """The function of `GINConv`: ``gin_propagate`` of ``x`` with ``eps``."""
    f = _builder("gin", dtype)
    x = f.arg([None, channels], name="x")
    eps = f.arg([1], name="eps")
    return f.finish(gin_propagate(f, x, eps)), "gin"


def _mlp_args(f: ir.Builder, in_channels: int, layers: tuple):
    """The weights of an MLP prefix ``layers`` (``(out, bias, relu)`` per
    linear map, PyG's ``Linear.weight`` [out, in] as stored): ``w<i>``, then
    ``b<i>`` when ``bias``."""
    args, width = [], in_channels
    for i, (out, bias, _) in enumerate(layers):
        args.append(_linear_args(f, out, width, bias, str(i)))
        width = out
    return args


def _mlp(f: ir.Builder, h, layers: tuple, args, n, first=None):
    """``h`` through the linear maps ``args`` of ``layers``, each followed
    by a ReLU where its ``relu`` says; ``first`` (the first map's result,
    already made) skips that map's matmul."""
    zero = f.const(0.0, name="zero") if any(relu for _, _, relu in layers) else None
    for i, ((w, b), (out, _, relu)) in enumerate(zip(args, layers)):
        h = first if i == 0 and first is not None else _linear(f, h, w, b, n, f"lin{i}")
        if relu:
            h = f.generic([(0, 1), (0, 1)], [_P, _P], [h], [f.empty([None, out], n)],
                          lambda v, o: _relu(v, zero), name=f"relu{i}")
    return h


def gin_layer(in_channels: int, layers: tuple, dtype: str, project_first: bool):
    """The function of `GINConv` whose `nn` starts with linear maps and
    ReLUs (``layers``: ``(out, bias, relu)`` per map), those included:
    ``mlp((1 + eps) x_i + sum_{j -> i} x_j)``. Arguments: ``x`` [N, in],
    ``eps`` [1], then the maps' weights (``_mlp_args``).
    ``project_first``: ``x W_0^T`` first, then the propagation moves the
    first map's ``out`` features over the edges instead of ``in``."""
    f = _builder("gin_layer", dtype)
    x = f.arg([None, in_channels], name="x")
    eps = f.arg([1], name="eps")
    args = _mlp_args(f, in_channels, layers)
    n = f.dim(x, name="n")
    if not project_first:
        return f.finish(_mlp(f, gin_propagate(f, x, eps), layers, args, n)), "gin_layer"
    (w, b), out = args[0], layers[0][0]
    h = f.matmul(x, w, f.zeros([None, out], n), transpose_rhs=True, name="h")
    agg = f.spmm("sum", h, name="agg")
    one = f.const(1.0, name="one")
    ins, maps = [h, agg, eps], [(0, 1), (0, 1), (Const(0),)]
    if b is not None:
        ins.append(b)
        maps.append((1,))
    first = f.generic(maps + [(0, 1)], [_P, _P], ins, [f.empty([None, out], n)],
                      (lambda v, a, e, c, o: (one + e) * v + a + c) if b is not None
                      else (lambda v, a, e, o: (one + e) * v + a), name="lin0")
    return f.finish(_mlp(f, None, layers, args, n, first=first)), "gin_layer"


def gine(channels: int, dtype: str, edge_lin=None):
    """The function of `GINEConv`:
    ``out_i = (1 + eps) x_i + sum_{j -> i} relu(x_j + e_ji)`` (``e`` [E, F]
    the edge features, already projected to F channels; ``eps`` [1]). The
    gather, the message and the sum fuse into one edge pass: no [E, F]
    temporary beyond ``e`` itself. ``edge_lin`` ``(edge_dim, bias)``: ``e``
    is the raw [E, edge_dim] features and the layer's ``lin`` is part of the
    function (``_gine_args``)."""
    f = _builder("gine", dtype)
    return f.finish(_gine_propagate(f, *_gine_args(f, channels, edge_lin))), "gine"


def gine_layer(in_channels: int, layers: tuple, dtype: str, edge_lin=None):
    """The function of `GINEConv` whose `nn` starts with linear maps and
    ReLUs (``layers`` as `gin_layer`'s), those included: ``mlp`` of
    ``gine``'s result. Arguments: those of ``gine`` (``_gine_args``), then
    the maps' weights (``_mlp_args``)."""
    f = _builder("gine_layer", dtype)
    gine_args = _gine_args(f, in_channels, edge_lin)
    args = _mlp_args(f, in_channels, layers)
    h = _gine_propagate(f, *gine_args)
    return f.finish(_mlp(f, h, layers, args, f.dim(h, name="rows"))), "gine_layer"


def _gine_args(f: ir.Builder, channels: int, edge_lin=None):
    """GINE's arguments ``x`` [N, C], ``e`` [E, C], ``eps`` [1]; with
    ``edge_lin`` ``(edge_dim, bias)``, ``e`` [E, edge_dim] and the edge
    projection's ``we`` [C, edge_dim] and, with ``bias``, ``be`` [C]
    (PyG's ``lin``: one GEMM over the edges inside the function):
    (x, e, eps, (we, be or None) or None)."""
    width = channels if edge_lin is None else edge_lin[0]
    x = f.arg([None, channels], name="x")
    e = f.arg([None, width], edge=True, name="e")
    eps = f.arg([1], name="eps")
    lin = None if edge_lin is None else \
        _linear_args(f, channels, edge_lin[0], edge_lin[1], "e")
    return x, e, eps, lin


def _gine_propagate(f: ir.Builder, x, e, eps, lin=None):
    """``(1 + eps) x_i + sum_{j -> i} relu(x_j + e_ji)``, ``e`` projected
    by ``lin`` (``(we, be)``) first where given."""
    channels = x.shape[1]
    if lin is not None:
        e = _linear(f, e, lin[0], lin[1], f.dim(e, name="edges"), "elin")
    agg = _gine_aggregate(f, x, e, channels)
    one = f.const(1.0, name="one")
    n = f.dim(x, name="n")
    return f.generic([(0, 1), (0, 1), (Const(0),), (0, 1)], [_P, _P], [x, agg, eps],
                     [f.empty([None, channels], n)],
                     lambda v, a, ep, o: (one + ep) * v + a, name="out")


def gine_pair(channels: int, dtype: str):
    """`GINEConv`'s aggregation on a bipartite graph (a
    ``!gnn.graph<bipartite>``): ``sum_{j -> i} relu(x_j + e_ji)`` over the
    sources' rows ``x`` into the destinations' (the layer adds the targets'
    ``(1 + eps) x_dst``), one edge pass as in ``gine``."""
    f = _builder("gine_pair", dtype, bipartite=True)
    x = f.arg([None, channels], side="src", name="x")
    e = f.arg([None, channels], edge=True, name="e")
    return f.finish(_gine_aggregate(f, x, e, channels)), "gine_pair"


def _gine_aggregate(f: ir.Builder, x, e, channels: int):
    """sum_{j -> i} relu(x_j + e_ji): the gather, the message and the sum."""
    zero = f.const(0.0, name="zero")
    xj = f.gather("src", x, name="xj")
    ne = f.dim(e, name="ne")
    msg = f.generic([(0, 1)] * 3, [_P, _P], [xj, e], [f.empty([None, channels], ne)],
                    lambda a, b, o: _relu(a + b, zero), name="msg")
    return f.reduce("sum", msg, name="agg")


def rgcn(channels: int, relations: int, dtype: str, weighted: bool, bipartite: bool):
    """The function of `RGCNConv` on a typed graph: ``out_i = sum_{e -> i}
    w_e h[src(e), type(e)]`` over the transformed features ``h`` [N_src, R,
    C] (every source under every relation's weight) and, with ``weighted``,
    the edge weights ``w`` [E] (1 / the destination's in-edges of that
    relation, for mean): the row each edge reads, the scaling and the sum
    are one edge pass; the backward adds each edge's term into ``dh``'s row
    of its (source, relation) pair (a relation reduce)."""
    f = _builder("rgcn_mean" if weighted else "rgcn", dtype, bipartite, typed=True)
    h = f.arg([None, relations, channels], side="src" if bipartite else None, name="h")
    w = f.arg([None], edge=True, name="w") if weighted else None
    m = f.gather("src", h, relation=True, name="m")
    if not weighted:
        return f.finish(f.reduce("sum", m, name="out")), "rgcn"
    ne = f.dim(m, name="ne")
    msg = f.generic([(0, 1), (0,), (0, 1)], [_P, _P], [m, w],
                    [f.empty([None, channels], ne)], lambda a, b, o: a * b, name="msg")
    return f.finish(f.reduce("sum", msg, name="out")), "rgcn_mean"


def _relu(v, zero):
    """torch.relu(v) inside a body: 0 where v <= 0, NaN kept."""
    return select(v <= zero, zero, v)


def _head_dot(f: ir.Builder, h, att, n, heads: int, name: str):
    """s[n, h] = sum_c h[n, h, c] * att[h, c]."""
    return f.generic([(0, 1, 2), (1, 2), (0, 1)], [_P, _P, _R], [h, att],
                     [f.zeros([None, heads], n)], lambda v, a, o: o + v * a,
                     name=name)


def gat_attention(f: ir.Builder, h, att_src, att_dst, negative_slope: float,
                  escore=None, keep=None, drop=None, h_dst=None):
    """GAT attention over h [N, H, C]:
    ``alpha = softmax_i(leaky_relu(att_src . h_j + att_dst . h_i [+ s_ji]))``,
    ``out_i = sum_j alpha_ji h_j`` -> [N, H, C]; ``escore`` [E, H] is the edge
    features' score term ``att_edge . W_e e_ji``; ``h_dst`` [N, H, C] the
    targets' own projection where it differs from ``h`` (a bipartite
    graph's, PyG's ``x_dst``: then ``att_dst . h_dst_i``). Returns (out,
    alpha)."""
    heads = h.shape[1]
    n = f.dim(h, name="n")
    a_src = _head_dot(f, h, att_src, n, heads, "a_src")
    if h_dst is None:
        a_dst = _head_dot(f, h, att_dst, n, heads, "a_dst")
    else:
        a_dst = _head_dot(f, h_dst, att_dst, f.dim(h_dst, name="n_dst"), heads, "a_dst")
    e = f.sddmm("add", a_src, a_dst, name="e")
    ne = f.dim(e, name="ne")
    if escore is not None:
        score = f.generic([(0, 1)] * 3, [_P, _P], [e, escore],
                          [f.empty([None, heads], ne)],
                          lambda v, es, o: _leaky(f, v + es, negative_slope),
                          name="score")
    else:
        score = f.generic([(0, 1)] * 2, [_P, _P], [e], [f.empty([None, heads], ne)],
                          lambda v, o: _leaky(f, v, negative_slope), name="score")
    agg, _, alpha = _softmax_aggregate(f, score, h, heads, keep, drop)
    return agg, alpha


def gat_pair(heads: int, channels: int, dtype: str, negative_slope: float,
             masked: bool, dropout: bool, weights: bool = False, edge: bool = False):
    """The function of `GATConv` on PyG's bipartite input, on a bipartite
    graph: ``gat_attention`` with the sources' projection ``h`` (the
    messages, ``att_src``) and the destinations' own ``h_dst``
    (``att_dst``); with ``edge`` the edge argument ``escore``, with
    ``weights`` the attention coefficients as a second result."""
    f = _builder("gat_pair", dtype, bipartite=True)
    h = f.arg([None, heads, channels], side="src", name="h")
    h_dst = f.arg([None, heads, channels], side="dst", name="h_dst")
    att_src = f.arg([heads, channels], name="att_src")
    att_dst = f.arg([heads, channels], name="att_dst")
    escore = f.arg([None, heads], edge=True, name="escore") if edge else None
    keep, drop = _masks(f, heads, masked, dropout)
    agg, alpha = gat_attention(f, h, att_src, att_dst, negative_slope, escore,
                               keep, drop, h_dst)
    return f.finish(agg, *([alpha] if weights else [])), "gat_pair"


def gat_layer(in_channels: int, heads: int, channels: int, dtype: str, negative_slope: float,
              bias: bool, masked: bool, dropout: bool, weights: bool = False,
              edge: bool = False):
    """The function of `GATConv` on one graph, its projection included:
    ``h = x W^T`` [N, heads, channels], then ``gat_attention``. With
    ``bias`` (PyG's concat, no residual) the result is the layer's output
    ``concat_h(out) + b`` [N, heads * channels]; else the aggregate [N,
    heads, channels]. Arguments: ``x`` [N, in], ``w`` [heads * channels,
    in] (PyG's ``lin.weight`` as stored), ``att_src``, ``att_dst`` [heads,
    channels], ``b`` (``bias``), then ``escore`` (``edge``), ``keep``,
    ``drop``."""
    f = _builder("gat_layer", dtype)
    hc = heads * channels
    x = f.arg([None, in_channels], name="x")
    w = f.arg([hc, in_channels], name="w")
    att_src = f.arg([heads, channels], name="att_src")
    att_dst = f.arg([heads, channels], name="att_dst")
    b = f.arg([hc], name="b") if bias else None
    escore = f.arg([None, heads], edge=True, name="escore") if edge else None
    keep, drop = _masks(f, heads, masked, dropout)
    n = f.dim(x, name="rows")
    h = _linear_heads(f, x, w, None, n, heads, "h")
    out, alpha = gat_attention(f, h, att_src, att_dst, negative_slope, escore, keep, drop)
    if b is not None:
        out = _concat_plus_bias(f, out, b, n)
    return f.finish(out, *([alpha] if weights else [])), "gat_layer"


def gatv2_attention(f: ir.Builder, l, r, att, negative_slope: float, eproj=None,
                    keep=None, drop=None):
    """GATv2 attention: ``alpha = softmax_i(att . leaky_relu(l_j + r_i [+ f_ji]))``,
    ``out_i = sum_j alpha_ji l_j`` -> [N, H, C]; ``eproj`` [E, H, C] holds the
    projected edge features ``W_e e_ji``. Returns (out, alpha)."""
    heads = l.shape[1]
    e = f.sddmm("add", l, r, name="e")
    ne = f.dim(e, name="ne")
    id3 = (0, 1, 2)
    maps = [id3, (1, 2), (0, 1)]
    ins = [e, att]
    if eproj is not None:
        maps = [id3] + maps
        ins = [e, eproj, att]

    def body(*block):
        o, a = block[-1], block[-2]
        v = block[0] + block[1] if eproj is not None else block[0]
        return o + _leaky(f, v, negative_slope) * a

    score = f.generic(maps, [_P, _P, _R], ins, [f.zeros([None, heads], ne)], body,
                      name="score")
    agg, _, alpha = _softmax_aggregate(f, score, l, heads, keep, drop)
    return agg, alpha


def gatv2(heads: int, channels: int, dtype: str, negative_slope: float,
          masked: bool, dropout: bool, weights: bool = False, edge: bool = False):
    """The function of `GATv2Conv` on PyG's bipartite input, on a bipartite
    graph: ``gatv2_attention`` of the sources' ``l`` and the destinations'
    ``r``; with ``edge`` the edge argument ``eproj``."""
    f = _builder("gatv2", dtype, bipartite=True)
    l = f.arg([None, heads, channels], side="src", name="l")
    r = f.arg([None, heads, channels], side="dst", name="r")
    att = f.arg([heads, channels], name="att")
    eproj = f.arg([None, heads, channels], edge=True, name="eproj") if edge else None
    keep, drop = _masks(f, heads, masked, dropout)
    agg, alpha = gatv2_attention(f, l, r, att, negative_slope, eproj, keep, drop)
    return f.finish(agg, *([alpha] if weights else [])), "gatv2"


def gatv2_layer(in_channels: int, heads: int, channels: int, dtype: str,
                negative_slope: float, lin_bias: bool, share: bool, bias: bool,
                masked: bool, dropout: bool, weights: bool = False, edge: bool = False):
    """The function of `GATv2Conv` on one graph, its projections included:
    ``l = x W_l^T (+ b_l)``, ``r = x W_r^T (+ b_r)`` (``share``: ``r = l``)
    [N, heads, channels], then ``gatv2_attention``; with ``bias`` the
    layer's output ``concat_h(out) + b`` as `gat_layer`'s. Arguments: ``x``
    [N, in], ``wl`` (``bl`` with ``lin_bias``), unless ``share`` ``wr``
    (``br``), ``att`` [heads, channels], ``b`` (``bias``), then ``eproj``
    (``edge``), ``keep``, ``drop``."""
    f = _builder("gatv2_layer", dtype)
    hc = heads * channels
    x = f.arg([None, in_channels], name="x")
    lins = [_linear_args(f, hc, in_channels, lin_bias, p)
            for p in ("l",) + (() if share else ("r",))]
    att = f.arg([heads, channels], name="att")
    b = f.arg([hc], name="b") if bias else None
    eproj = f.arg([None, heads, channels], edge=True, name="eproj") if edge else None
    keep, drop = _masks(f, heads, masked, dropout)
    n = f.dim(x, name="rows")
    l, *rs = (_linear_heads(f, x, w, wb, n, heads, p) for (w, wb), p in zip(lins, "lr"))
    r = rs[0] if rs else l
    out, alpha = gatv2_attention(f, l, r, att, negative_slope, eproj, keep, drop)
    if b is not None:
        out = _concat_plus_bias(f, out, b, n)
    return f.finish(out, *([alpha] if weights else [])), "gatv2_layer"


def transformer_attention(f: ir.Builder, q, k, v, eproj=None, keep=None, drop=None):
    """Graph Transformer attention:
    ``alpha = softmax_i(q_i . (k_j [+ f_ji]) / sqrt(C))``,
    ``out_i = sum_j alpha_ji (v_j [+ f_ji])``; ``eproj`` [E, H, C] holds the
    projected edge features ``W_e e_ji``. Returns (out, softmax weights
    before dropout)."""
    heads, channels = q.shape[1], q.shape[2]
    hc = [None, heads, channels]
    root = f.const(math.sqrt(channels), name="root")
    dot = f.sddmm("dot", k, q, name="dot")
    ne = f.dim(dot, name="ne")
    id2, id3 = (0, 1), (0, 1, 2)
    if eproj is not None:
        # q_i . f_ji: the destination's query on every edge, dotted per head.
        qd = f.gather("dst", q, name="qd")
        qf = f.generic([id3, id3, (0, 1)], [_P, _P, _R], [qd, eproj],
                       [f.zeros([None, heads], ne)], lambda a, b, o: o + a * b,
                       name="qf")
        score = f.generic([id2] * 3, [_P, _P], [dot, qf], [f.empty([None, heads], ne)],
                          lambda a, b, o: (a + b) / root, name="score")
    else:
        score = f.generic([id2] * 2, [_P, _P], [dot], [f.empty([None, heads], ne)],
                          lambda a, o: a / root, name="score")
    agg, softmax, alpha = _softmax_aggregate(f, score, v, heads, keep, drop)
    out = agg
    if eproj is not None:
        # sum_j alpha_ji f_ji: the edge features' share of the values.
        msg = f.generic([(0, 1), id3, id3], [_P] * 3, [alpha, eproj],
                        [f.empty(hc, ne)], lambda a, b, o: a * b, name="msg")
        fsum = f.reduce("sum", msg, name="fsum")
        n = f.dim(q, name="n")
        out = f.generic([id3] * 3, [_P] * 3, [agg, fsum], [f.empty(hc, n)],
                        lambda a, b, o: a + b, name="out")
    return out, softmax


def transformer(heads: int, channels: int, dtype: str, masked: bool, dropout: bool,
                weights: bool = False, edge: bool = False, bipartite: bool = False):
    """The function of `TransformerConv`: ``transformer_attention``; PyG's
    TransformerConv returns the weights before dropout. ``bipartite``: on a
    bipartite graph, the destinations' queries ``q`` and the sources' keys
    and values ``k``, ``v`` (PyG's bipartite input)."""
    f = _builder("transformer", dtype, bipartite)
    hc = [None, heads, channels]
    side = (lambda s: s) if bipartite else (lambda s: None)
    q = f.arg(hc, side=side("dst"), name="q")
    k = f.arg(hc, side=side("src"), name="k")
    v = f.arg(hc, side=side("src"), name="v")
    eproj = f.arg(hc, edge=True, name="eproj") if edge else None
    keep, drop = _masks(f, heads, masked, dropout)
    out, softmax = transformer_attention(f, q, k, v, eproj, keep, drop)
    return f.finish(out, *([softmax] if weights else [])), "transformer"


def transformer_layer(in_channels: int, heads: int, channels: int, dtype: str, bias: bool,
                      skip: bool, masked: bool, dropout: bool, weights: bool = False,
                      edge: bool = False):
    """The function of `TransformerConv` on one graph, its projections
    included: ``q, k, v = x W_{q,k,v}^T (+ b)`` [N, heads, channels], then
    ``transformer_attention``. With ``skip`` (PyG's concat, root weight and
    no beta) the result is the layer's output ``concat_h(out) + x W_s^T
    (+ b_s)`` [N, heads * channels]; else the aggregate [N, heads,
    channels] (the heads' mean, the skip and its gate run in PyTorch).
    Arguments: ``x`` [N, in], then ``wq`` (``bq``), ``wk`` (``bk``), ``wv``
    (``bv``), with ``skip`` ``ws`` (``bs``) (PyG's weights as stored, [out,
    in]), then ``eproj`` (``edge``), ``keep``, ``drop``. A layer call is one
    op forward and one backward, the weights' gradients included."""
    f = _builder("transformer_layer", dtype)
    hc = heads * channels
    x = f.arg([None, in_channels], name="x")
    params = {p: _linear_args(f, hc, in_channels, bias, p)
              for p in "qkv" + ("s" if skip else "")}
    eproj = f.arg([None, heads, channels], edge=True, name="eproj") if edge else None
    keep, drop = _masks(f, heads, masked, dropout)
    n = f.dim(x, name="n")
    q, k, v = (_linear_heads(f, x, *params[p], n, heads, p) for p in "qkv")
    out, softmax = transformer_attention(f, q, k, v, eproj, keep, drop)
    if skip:
        flat = f.collapse(out, [[0], [1, 2]], name="flat")
        s = _linear(f, x, *params["s"], n, "s0")
        out = f.generic([(0, 1)] * 3, [_P, _P], [flat, s], [f.empty([None, hc], n)],
                        lambda a, b, o: a + b, name="out")
    return f.finish(out, *([softmax] if weights else [])), "transformer_layer"


def agnn_propagate(f: ir.Builder, x, beta, keep=None):
    """AGNN propagation over x [N, F] (one head, scores [E]):
    ``n_i = x_i / max(||x_i||, 1e-12)``, ``alpha = softmax_i(beta * n_i . n_j)``,
    ``out_i = sum_j alpha_ji x_j`` -> [N, F]."""
    channels = x.shape[1]
    n = f.dim(x, name="n")
    # F.normalize's eps; float16's smallest number where 1e-12 would round
    # to 0 (and a zero row would give 0 / 0).
    tiny = f.const(2.0 ** -24 if f.dtype == "f16" else 1e-12, name="tiny")
    sq = f.generic([(0, 1), (0,)], [_P, _R], [x], [f.zeros([None], n)],
                   lambda v, o: o + v * v, name="sq")
    xn = f.generic([(0, 1), (0,), (0, 1)], [_P, _P], [x, sq],
                   [f.empty([None, channels], n)],
                   lambda v, s, o: v / ir.maximum(sqrt(s), tiny), name="xn")
    cos = f.sddmm("dot", xn, xn, name="cos")
    ne = f.dim(cos, name="ne")
    score = f.generic([(0,), (Const(0),), (0,)], [_P], [cos, beta],
                      [f.empty([None], ne)], lambda c, b, o: b * c, name="score")
    out, _, _ = _softmax_aggregate(f, score, x, None, keep, None)
    return out


def agnn(channels: int, dtype: str, masked: bool):
    """The function of `AGNNConv`: ``agnn_propagate`` of ``x`` [N, F] with
    ``beta``."""
    f = _builder("agnn", dtype)
    x = f.arg([None, channels], name="x")
    beta = f.arg([1], name="beta")
    keep = f.arg([None], edge=True, differentiable=False, name="keep") if masked else None
    return f.finish(agnn_propagate(f, x, beta, keep)), "agnn"
