// RGCN's edge pass on a typed graph: each edge reads its (source, relation)
// row of h (every source under each of 3 relations), scales it by its
// weight and sums it into its destination.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
func.func @rgcn(%g: !gnn.graph<typed>, %h: tensor<?x3x8xf32> {gnn.differentiable},
                %w: tensor<?xf32> {gnn.domain = "edge"}) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %m = gnn.gather src %g, %h relation : !gnn.graph<typed>, tensor<?x3x8xf32> -> tensor<?x8xf32>
  %ne = tensor.dim %m, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%ne) : tensor<?x8xf32>
  %msg = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%m, %w : tensor<?x8xf32>, tensor<?xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<?x8xf32>
  %out = gnn.reduce sum %g, %msg : !gnn.graph<typed>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %out : tensor<?x8xf32>
}
