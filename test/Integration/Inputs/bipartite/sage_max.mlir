// A bipartite SAGE-max aggregation with the root term: max over each
// destination's sources (ties and duplicate edges share the gradient),
// plus the destinations' own rows.
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @sage_max(%g: !gnn.graph<bipartite>, %x: tensor<?x32xf32> {gnn.domain = "src"},
                    %xd: tensor<?x32xf32> {gnn.domain = "dst"}) -> tensor<?x32xf32> {
  %c0 = arith.constant 0 : index
  %nd = tensor.dim %xd, %c0 : tensor<?x32xf32>
  %agg = gnn.spmm max %g, %x : !gnn.graph<bipartite>, tensor<?x32xf32> -> tensor<?x32xf32>
  %1 = tensor.empty(%nd) : tensor<?x32xf32>
  %out = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%agg, %xd : tensor<?x32xf32>, tensor<?x32xf32>) outs(%1 : tensor<?x32xf32>) {
  ^bb0(%a: f32, %r: f32, %o: f32):
    %2 = arith.addf %a, %r : f32
    linalg.yield %2 : f32
  } -> tensor<?x32xf32>
  return %out : tensor<?x32xf32>
}
