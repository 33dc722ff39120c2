# Session 82: GINE's layer function with its edge projection (edge_dim 4) written as
# an elementwise map (each element a sum of edge_dim products) instead of a
# matmul, to see whether the forward fuses it into the edge pass; gnn-autodiff
# refuses it (a map with a constant index of a dimension larger than 1), so
# only the forward was timed (call 3).
#   PYTHONPATH=build/python python bench/results/checks-s82/gine_unrolled.py OUT.mlir
import sys
from gnnc.nn import _ir
from gnnc.ir import Const
P = _ir._P
orig = _ir._gine_propagate
def unrolled(f, x, e, eps, lin=None):
    if lin is None:
        return orig(f, x, e, eps, lin)
    we, be = lin
    out, k = we.shape
    ne = f.dim(e, name="edges")
    ins = [e] * k + [we] * k + ([be] if be is not None else [])
    maps = [(0, Const(i)) for i in range(k)] + [(1, Const(i)) for i in range(k)] + ([(1,)] if be is not None else [])
    def body(*a):
        es, ws = a[:k], a[k:2 * k]
        acc = es[0] * ws[0]
        for i in range(1, k):
            acc = acc + es[i] * ws[i]
        if be is not None:
            acc = acc + a[2 * k]
        return acc
    elin = f.generic(maps + [(0, 1)], [P, P], ins, [f.empty([None, out], ne)], body, name="elin")
    agg = _ir._gine_aggregate(f, x, elin, x.shape[1])
    one = f.const(1.0, name="one")
    n = f.dim(x, name="n")
    return f.generic([(0, 1), (0, 1), (Const(0),), (0, 1)], [P, P], [x, agg, eps],
                     [f.empty([None, x.shape[1]], n)], lambda v, a, ep, o: (one + ep) * v + a, name="out")
_ir._gine_propagate = unrolled
m = _ir.gine_layer(64, ((64, True, True), (64, True, False)), 'f32', edge_lin=(4, True))[0]
open(sys.argv[1], 'w').write(m.text())
