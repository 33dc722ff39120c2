// GAT layer (Velickovic et al.), 4 heads x 16 features, as PyG's
// GATConv(64, 16, heads=4, add_self_loops=False):
//   h = x W (nodes x heads x 16)
//   e_ji = leaky_relu(a_src . h_j + a_dst . h_i, 0.2)   per head
//   alpha = softmax over the edges entering i
//   out_i = concat_heads(sum_j alpha_ji h_j) + b

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#h3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#att = affine_map<(d0, d1, d2) -> (d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>

func.func @gat(%g: !gnn.graph, %x: tensor<?x64xf32>, %w: tensor<64x64xf32>,
               %att_src: tensor<4x16xf32>, %att_dst: tensor<4x16xf32>,
               %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %slope = arith.constant 0.2 : f32
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %empty = tensor.empty(%n) : tensor<?x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x64xf32>) -> tensor<?x64xf32>
  %h2 = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x64xf32>)
                      outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %h = tensor.expand_shape %h2 [[0], [1, 2]] output_shape [%n, 4, 16]
      : tensor<?x64xf32> into tensor<?x4x16xf32>

  // Per-head attention halves: a_src . h_n and a_dst . h_n.
  %sempty = tensor.empty(%n) : tensor<?x4xf32>
  %szero = linalg.fill ins(%zero : f32) outs(%sempty : tensor<?x4xf32>) -> tensor<?x4xf32>
  %as = linalg.generic {indexing_maps = [#h3, #att, #red],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h, %att_src : tensor<?x4x16xf32>, tensor<4x16xf32>) outs(%szero : tensor<?x4xf32>) {
  ^bb0(%v: f32, %a: f32, %o: f32):
    %m = arith.mulf %v, %a : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  %ad = linalg.generic {indexing_maps = [#h3, #att, #red],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h, %att_dst : tensor<?x4x16xf32>, tensor<4x16xf32>) outs(%szero : tensor<?x4xf32>) {
  ^bb0(%v: f32, %a: f32, %o: f32):
    %m = arith.mulf %v, %a : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>

  %e = gnn.sddmm add %g, %as, %ad : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %c0e = arith.constant 0 : index
  %ne = tensor.dim %e, %c0e : tensor<?x4xf32>
  %eempty = tensor.empty(%ne) : tensor<?x4xf32>
  %lr = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%e : tensor<?x4xf32>) outs(%eempty : tensor<?x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %neg = arith.mulf %v, %slope : f32
    %pos = arith.cmpf ogt, %v, %zero : f32
    %r = arith.select %pos, %v, %neg : f32
    linalg.yield %r : f32
  } -> tensor<?x4xf32>
  %alpha = gnn.edge_softmax %g, %lr : tensor<?x4xf32>
  %agg = gnn.spmm sum %g, %h weights(%alpha : tensor<?x4xf32>)
      : tensor<?x4x16xf32> -> tensor<?x4x16xf32>
  %flat = tensor.collapse_shape %agg [[0], [1, 2]] : tensor<?x4x16xf32> into tensor<?x64xf32>
  %out = linalg.generic {indexing_maps = [#id2, #col, #id2],
                         iterator_types = ["parallel", "parallel"]}
      ins(%flat, %b : tensor<?x64xf32>, tensor<64xf32>) outs(%empty : tensor<?x64xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  } -> tensor<?x64xf32>
  return %out : tensor<?x64xf32>
}
