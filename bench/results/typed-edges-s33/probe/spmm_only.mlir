// Fused gather-apply-reduce (one aggregation kernel, nothing edge-sized):
// out[v] = max over edges u->v of tanh(x[u] * w) + edge_bias[e], and a
// weighted spmm whose weights are an edge elementwise chain of an sddmm.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#id1 = affine_map<(d0) -> (d0)>
func.func @fused_aggregation(%g: !gnn.graph, %x: tensor<?x64xf32>, %w: tensor<64xf32>,
                             %a: tensor<?x1xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %e = gnn.gather src %g, %x : tensor<?x64xf32> -> tensor<?x64xf32>
  %ne = tensor.dim %e, %c0 : tensor<?x64xf32>
  %em = tensor.empty(%ne) : tensor<?x64xf32>
  %t = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%e, %w : tensor<?x64xf32>, tensor<64xf32>) outs(%em : tensor<?x64xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %m = arith.mulf %v, %s : f32
    %y = math.tanh %m : f32
    linalg.yield %y : f32
  } -> tensor<?x64xf32>
  %r = gnn.reduce max %g, %t : tensor<?x64xf32> -> tensor<?x64xf32>
  %d = gnn.sddmm dot %g, %a, %a : tensor<?x1xf32>, tensor<?x1xf32> -> tensor<?xf32>
  %nd = tensor.dim %d, %c0 : tensor<?xf32>
  %ed = tensor.empty(%nd) : tensor<?xf32>
  %wt = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%d : tensor<?xf32>) outs(%ed : tensor<?xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = math.exp %v : f32
    linalg.yield %y : f32
  } -> tensor<?xf32>
  %s = gnn.spmm sum %g, %x weights(%wt : tensor<?xf32>) : tensor<?x64xf32> -> tensor<?x64xf32>
  return %s : tensor<?x64xf32>
}
