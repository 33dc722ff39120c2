// A two-layer GAT (4 heads x 16 features per layer, ReLU between layers),
// each layer as examples/gat.mlir. The memory planner's attention case: the
// first layer's temporaries are dead before the second layer's are written.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#h3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#att = affine_map<(d0, d1, d2) -> (d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>

func.func @gat2(%g: !gnn.graph, %x: tensor<?x64xf32>,
                %w1: tensor<64x64xf32>, %att_src1: tensor<4x16xf32>,
                %att_dst1: tensor<4x16xf32>, %b1: tensor<64xf32>,
                %w2: tensor<64x64xf32>, %att_src2: tensor<4x16xf32>,
                %att_dst2: tensor<4x16xf32>, %b2: tensor<64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %slope = arith.constant 0.2 : f32
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>

  // Layer 1.
  %empty1 = tensor.empty(%n) : tensor<?x64xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%empty1 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %h21 = linalg.matmul ins(%x, %w1 : tensor<?x64xf32>, tensor<64x64xf32>)
                      outs(%acc1 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %h1 = tensor.expand_shape %h21 [[0], [1, 2]] output_shape [%n, 4, 16]
      : tensor<?x64xf32> into tensor<?x4x16xf32>

  // Per-head attention halves: a_src . h_n and a_dst . h_n.
  %sempty1 = tensor.empty(%n) : tensor<?x4xf32>
  %szero1 = linalg.fill ins(%zero : f32) outs(%sempty1 : tensor<?x4xf32>) -> tensor<?x4xf32>
  %as1 = linalg.generic {indexing_maps = [#h3, #att, #red],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h1, %att_src1 : tensor<?x4x16xf32>, tensor<4x16xf32>) outs(%szero1 : tensor<?x4xf32>) {
  ^bb0(%v: f32, %a: f32, %o: f32):
    %m1 = arith.mulf %v, %a : f32
    %s1 = arith.addf %o, %m1 : f32
    linalg.yield %s1 : f32
  } -> tensor<?x4xf32>
  %ad1 = linalg.generic {indexing_maps = [#h3, #att, #red],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h1, %att_dst1 : tensor<?x4x16xf32>, tensor<4x16xf32>) outs(%szero1 : tensor<?x4xf32>) {
  ^bb0(%v: f32, %a: f32, %o: f32):
    %m1 = arith.mulf %v, %a : f32
    %s1 = arith.addf %o, %m1 : f32
    linalg.yield %s1 : f32
  } -> tensor<?x4xf32>

  %e1 = gnn.sddmm add %g, %as1, %ad1 : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %c0e1 = arith.constant 0 : index
  %ne1 = tensor.dim %e1, %c0e1 : tensor<?x4xf32>
  %eempty1 = tensor.empty(%ne1) : tensor<?x4xf32>
  %lr1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%e1 : tensor<?x4xf32>) outs(%eempty1 : tensor<?x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %neg1 = arith.mulf %v, %slope : f32
    %pos1 = arith.cmpf ogt, %v, %zero : f32
    %r1 = arith.select %pos1, %v, %neg1 : f32
    linalg.yield %r1 : f32
  } -> tensor<?x4xf32>
  %alpha1 = gnn.edge_softmax %g, %lr1 : tensor<?x4xf32>
  %agg1 = gnn.spmm sum %g, %h1 weights(%alpha1 : tensor<?x4xf32>)
      : tensor<?x4x16xf32> -> tensor<?x4x16xf32>
  %flat1 = tensor.collapse_shape %agg1 [[0], [1, 2]] : tensor<?x4x16xf32> into tensor<?x64xf32>
  %out1 = linalg.generic {indexing_maps = [#id2, #col, #id2],
                         iterator_types = ["parallel", "parallel"]}
      ins(%flat1, %b1 : tensor<?x64xf32>, tensor<64xf32>) outs(%empty1 : tensor<?x64xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s1 = arith.addf %v, %bias : f32
    linalg.yield %s1 : f32
  } -> tensor<?x64xf32>
  %rempty = tensor.empty(%n) : tensor<?x64xf32>
  %r1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%out1 : tensor<?x64xf32>) outs(%rempty : tensor<?x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x64xf32>

  // Layer 2.
  %empty2 = tensor.empty(%n) : tensor<?x64xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%empty2 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %h22 = linalg.matmul ins(%r1, %w2 : tensor<?x64xf32>, tensor<64x64xf32>)
                      outs(%acc2 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %h2 = tensor.expand_shape %h22 [[0], [1, 2]] output_shape [%n, 4, 16]
      : tensor<?x64xf32> into tensor<?x4x16xf32>

  // Per-head attention halves: a_src . h_n and a_dst . h_n.
  %sempty2 = tensor.empty(%n) : tensor<?x4xf32>
  %szero2 = linalg.fill ins(%zero : f32) outs(%sempty2 : tensor<?x4xf32>) -> tensor<?x4xf32>
  %as2 = linalg.generic {indexing_maps = [#h3, #att, #red],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h2, %att_src2 : tensor<?x4x16xf32>, tensor<4x16xf32>) outs(%szero2 : tensor<?x4xf32>) {
  ^bb0(%v: f32, %a: f32, %o: f32):
    %m2 = arith.mulf %v, %a : f32
    %s2 = arith.addf %o, %m2 : f32
    linalg.yield %s2 : f32
  } -> tensor<?x4xf32>
  %ad2 = linalg.generic {indexing_maps = [#h3, #att, #red],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h2, %att_dst2 : tensor<?x4x16xf32>, tensor<4x16xf32>) outs(%szero2 : tensor<?x4xf32>) {
  ^bb0(%v: f32, %a: f32, %o: f32):
    %m2 = arith.mulf %v, %a : f32
    %s2 = arith.addf %o, %m2 : f32
    linalg.yield %s2 : f32
  } -> tensor<?x4xf32>

  %e2 = gnn.sddmm add %g, %as2, %ad2 : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %c0e2 = arith.constant 0 : index
  %ne2 = tensor.dim %e2, %c0e2 : tensor<?x4xf32>
  %eempty2 = tensor.empty(%ne2) : tensor<?x4xf32>
  %lr2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%e2 : tensor<?x4xf32>) outs(%eempty2 : tensor<?x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %neg2 = arith.mulf %v, %slope : f32
    %pos2 = arith.cmpf ogt, %v, %zero : f32
    %r2 = arith.select %pos2, %v, %neg2 : f32
    linalg.yield %r2 : f32
  } -> tensor<?x4xf32>
  %alpha2 = gnn.edge_softmax %g, %lr2 : tensor<?x4xf32>
  %agg2 = gnn.spmm sum %g, %h2 weights(%alpha2 : tensor<?x4xf32>)
      : tensor<?x4x16xf32> -> tensor<?x4x16xf32>
  %flat2 = tensor.collapse_shape %agg2 [[0], [1, 2]] : tensor<?x4x16xf32> into tensor<?x64xf32>
  %out2 = linalg.generic {indexing_maps = [#id2, #col, #id2],
                         iterator_types = ["parallel", "parallel"]}
      ins(%flat2, %b2 : tensor<?x64xf32>, tensor<64xf32>) outs(%empty2 : tensor<?x64xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s2 = arith.addf %v, %bias : f32
    linalg.yield %s2 : f32
  } -> tensor<?x64xf32>
  return %out2 : tensor<?x64xf32>
}
