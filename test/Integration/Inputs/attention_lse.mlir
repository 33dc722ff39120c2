// GATv2 (examples/gatv2.mlir) that also returns the per-(node, head)
// log-sum-exp of its attention softmax, the residual a backward pass keeps:
// the fused attention kernel writes it beside its output. Plus a softmax
// whose log-sum-exp is used after an op that reads it too early for fusion
// (see @softmax_lse).

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#h3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#att = affine_map<(d0, d1, d2) -> (d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>

func.func @gatv2_lse(%g: !gnn.graph, %x: tensor<?x64xf32>, %wl: tensor<64x64xf32>,
                 %bl: tensor<64xf32>, %wr: tensor<64x64xf32>, %br: tensor<64xf32>,
                 %att: tensor<4x16xf32>, %b: tensor<64xf32>) -> (tensor<?x64xf32>, tensor<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %slope = arith.constant 0.2 : f32
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %empty = tensor.empty(%n) : tensor<?x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x64xf32>) -> tensor<?x64xf32>
  %xl = linalg.matmul ins(%x, %wl : tensor<?x64xf32>, tensor<64x64xf32>)
                      outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %xr = linalg.matmul ins(%x, %wr : tensor<?x64xf32>, tensor<64x64xf32>)
                      outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %l2 = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%xl, %bl : tensor<?x64xf32>, tensor<64xf32>) outs(%empty : tensor<?x64xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  } -> tensor<?x64xf32>
  %r2 = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%xr, %br : tensor<?x64xf32>, tensor<64xf32>) outs(%empty : tensor<?x64xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  } -> tensor<?x64xf32>
  %l = tensor.expand_shape %l2 [[0], [1, 2]] output_shape [%n, 4, 16]
      : tensor<?x64xf32> into tensor<?x4x16xf32>
  %r = tensor.expand_shape %r2 [[0], [1, 2]] output_shape [%n, 4, 16]
      : tensor<?x64xf32> into tensor<?x4x16xf32>

  // e = l_src + r_dst on every edge, then the per-head score.
  %e = gnn.sddmm add %g, %l, %r : tensor<?x4x16xf32>, tensor<?x4x16xf32> -> tensor<?x4x16xf32>
  %ne = tensor.dim %e, %c0 : tensor<?x4x16xf32>
  %sempty = tensor.empty(%ne) : tensor<?x4xf32>
  %szero = linalg.fill ins(%zero : f32) outs(%sempty : tensor<?x4xf32>) -> tensor<?x4xf32>
  %score = linalg.generic {indexing_maps = [#h3, #att, #red],
                           iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e, %att : tensor<?x4x16xf32>, tensor<4x16xf32>) outs(%szero : tensor<?x4xf32>) {
  ^bb0(%v: f32, %a: f32, %o: f32):
    %neg = arith.mulf %v, %slope : f32
    %pos = arith.cmpf ogt, %v, %zero : f32
    %lr = arith.select %pos, %v, %neg : f32
    %m = arith.mulf %lr, %a : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  %alpha, %lse = gnn.edge_softmax %g, %score : tensor<?x4xf32>, tensor<?x4xf32>
  %agg = gnn.spmm sum %g, %l weights(%alpha : tensor<?x4xf32>)
      : tensor<?x4x16xf32> -> tensor<?x4x16xf32>
  %flat = tensor.collapse_shape %agg [[0], [1, 2]] : tensor<?x4x16xf32> into tensor<?x64xf32>
  %out = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%flat, %b : tensor<?x64xf32>, tensor<64xf32>) outs(%empty : tensor<?x64xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  } -> tensor<?x64xf32>
  return %out, %lse : tensor<?x64xf32>, tensor<?x4xf32>
}


// The scores' softmax and its log-sum-exp, unfused (no spmm follows), and a
// use of the log-sum-exp by a node-wise op.
func.func @softmax_lse(%g: !gnn.graph, %x: tensor<?x4xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %s = gnn.sddmm mul %g, %x, %x : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %alpha, %lse = gnn.edge_softmax %g, %s : tensor<?x4xf32>, tensor<?x4xf32>
  return %alpha, %lse : tensor<?x4xf32>, tensor<?x4xf32>
}
