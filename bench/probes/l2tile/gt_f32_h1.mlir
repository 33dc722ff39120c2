// alpha = softmax_v(q[v] . k[u] * s); out[v] = sum_u alpha v[u]  (H = 1, D = 32, s = 1/sqrt(32))
#e2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @gt(%g: !gnn.graph, %q: tensor<?x1x32xf32>, %k: tensor<?x1x32xf32>, %v: tensor<?x1x32xf32>) -> tensor<?x1x32xf32> {
  %c0 = arith.constant 0 : index
  %scale = arith.constant 0.17677669 : f32
  %raw = gnn.sddmm dot %g, %k, %q : tensor<?x1x32xf32>, tensor<?x1x32xf32> -> tensor<?x1xf32>
  %ne = tensor.dim %raw, %c0 : tensor<?x1xf32>
  %se = tensor.empty(%ne) : tensor<?x1xf32>
  %score = linalg.generic {indexing_maps = [#e2, #e2], iterator_types = ["parallel", "parallel"]}
      ins(%raw : tensor<?x1xf32>) outs(%se : tensor<?x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %scale : f32
    linalg.yield %m : f32
  } -> tensor<?x1xf32>
  %alpha = gnn.edge_softmax %g, %score : tensor<?x1xf32>
  %agg = gnn.spmm sum %g, %v weights(%alpha : tensor<?x1xf32>) : tensor<?x1x32xf32> -> tensor<?x1x32xf32>
  return %agg : tensor<?x1x32xf32>
}
