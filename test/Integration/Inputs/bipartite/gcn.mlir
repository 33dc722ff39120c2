// A bipartite GCN-style propagation (DGL's GraphConv on a block, norm
// "both"): each message scaled by its source's out-degree^-1/2, the sum
// scaled by the destination's in-degree^-1/2 (0 where a degree is 0).
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#vec = affine_map<(d0) -> (d0)>
func.func @gcn(%g: !gnn.graph<bipartite>, %x: tensor<?x16xf32> {gnn.domain = "src"}) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %dout = gnn.degree %g reversed : !gnn.graph<bipartite>, tensor<?xf32>
  %din = gnn.degree %g : !gnn.graph<bipartite>, tensor<?xf32>
  %ns = tensor.dim %x, %c0 : tensor<?x16xf32>
  %nd = tensor.dim %din, %c0 : tensor<?xf32>
  %e1 = tensor.empty(%ns) : tensor<?x16xf32>
  %xs = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %dout : tensor<?x16xf32>, tensor<?xf32>) outs(%e1 : tensor<?x16xf32>) {
  ^bb0(%v: f32, %d: f32, %o: f32):
    %pos = arith.cmpf ogt, %d, %zero : f32
    %r = math.rsqrt %d : f32
    %s = arith.select %pos, %r, %zero : f32
    %m = arith.mulf %v, %s : f32
    linalg.yield %m : f32
  } -> tensor<?x16xf32>
  %agg = gnn.spmm sum %g, %xs : !gnn.graph<bipartite>, tensor<?x16xf32> -> tensor<?x16xf32>
  %e2 = tensor.empty(%nd) : tensor<?x16xf32>
  %out = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%agg, %din : tensor<?x16xf32>, tensor<?xf32>) outs(%e2 : tensor<?x16xf32>) {
  ^bb0(%v: f32, %d: f32, %o: f32):
    %pos = arith.cmpf ogt, %d, %zero : f32
    %r = math.rsqrt %d : f32
    %s = arith.select %pos, %r, %zero : f32
    %m = arith.mulf %v, %s : f32
    linalg.yield %m : f32
  } -> tensor<?x16xf32>
  return %out : tensor<?x16xf32>
}
