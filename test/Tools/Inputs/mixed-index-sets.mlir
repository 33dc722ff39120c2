// An edge tensor plus a node tensor, row by row: no graph sizes the rows, so
// the CUDA pipeline refuses it (gnn-form-kernel-groups).
#m = affine_map<(d0, d1) -> (d0, d1)>
func.func @node_plus_edge(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %e = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  %c0 = arith.constant 0 : index
  %ne = tensor.dim %e, %c0 : tensor<?x8xf32>
  %0 = tensor.empty(%ne) : tensor<?x8xf32>
  %r = linalg.generic {indexing_maps = [#m, #m, #m], iterator_types = ["parallel", "parallel"]} ins(%e, %x : tensor<?x8xf32>, tensor<?x8xf32>) outs(%0 : tensor<?x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}
