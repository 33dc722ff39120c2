// AGNN propagation (Thekumparampil et al.), as PyG's
// AGNNConv(requires_grad=True, add_self_loops=False):
//   n_i = x_i / max(||x_i||, 1e-12)
//   alpha_ji = softmax_j(beta * n_i . n_j)
//   out_i = sum_j alpha_ji x_j

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#beta = affine_map<(d0) -> (0)>
#id1 = affine_map<(d0) -> (d0)>

func.func @agnn(%g: !gnn.graph, %x: tensor<?x64xf32>, %beta: tensor<1xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %tiny = arith.constant 1.0e-12 : f32
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  // Row norms, then normalised rows.
  %nempty = tensor.empty(%n) : tensor<?xf32>
  %nzero = linalg.fill ins(%zero : f32) outs(%nempty : tensor<?xf32>) -> tensor<?xf32>
  %sq = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x64xf32>) outs(%nzero : tensor<?xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %v : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %empty = tensor.empty(%n) : tensor<?x64xf32>
  %xn = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sq : tensor<?x64xf32>, tensor<?xf32>) outs(%empty : tensor<?x64xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %norm = math.sqrt %s : f32
    %d = arith.maximumf %norm, %tiny : f32
    %r = arith.divf %v, %d : f32
    linalg.yield %r : f32
  } -> tensor<?x64xf32>
  %cos = gnn.sddmm dot %g, %xn, %xn : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?xf32>
  %ne = tensor.dim %cos, %c0 : tensor<?xf32>
  %eempty = tensor.empty(%ne) : tensor<?xf32>
  %score = linalg.generic {indexing_maps = [#id1, #beta, #id1], iterator_types = ["parallel"]}
      ins(%cos, %beta : tensor<?xf32>, tensor<1xf32>) outs(%eempty : tensor<?xf32>) {
  ^bb0(%c: f32, %b: f32, %o: f32):
    %s = arith.mulf %c, %b : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %alpha = gnn.edge_softmax %g, %score : tensor<?xf32>
  %out = gnn.spmm sum %g, %x weights(%alpha : tensor<?xf32>) : tensor<?x64xf32> -> tensor<?x64xf32>
  return %out : tensor<?x64xf32>
}
