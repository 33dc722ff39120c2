// RGCN's edge pass in bf16 on a typed graph: each edge reads its (source, relation)
// row of h (every source under each of 3 relations), scales it by its
// weight and sums it into its destination.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
func.func @rgcn_bf16(%g: !gnn.graph<typed>, %h: tensor<?x3x8xbf16> {gnn.differentiable},
                %w: tensor<?xbf16> {gnn.domain = "edge"}) -> tensor<?x8xbf16> {
  %c0 = arith.constant 0 : index
  %m = gnn.gather src %g, %h relation : !gnn.graph<typed>, tensor<?x3x8xbf16> -> tensor<?x8xbf16>
  %ne = tensor.dim %m, %c0 : tensor<?x8xbf16>
  %e = tensor.empty(%ne) : tensor<?x8xbf16>
  %msg = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%m, %w : tensor<?x8xbf16>, tensor<?xbf16>) outs(%e : tensor<?x8xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %o: bf16):
    %p = arith.mulf %a, %b : bf16
    linalg.yield %p : bf16
  } -> tensor<?x8xbf16>
  %out = gnn.reduce sum %g, %msg : !gnn.graph<typed>, tensor<?x8xbf16> -> tensor<?x8xbf16>
  return %out : tensor<?x8xbf16>
}
