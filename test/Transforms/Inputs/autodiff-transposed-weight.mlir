#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#tr = affine_map<(d0, d1, d2) -> (d2, d1)>
func.func @f(%g: !gnn.graph, %x: tensor<?x4x8xf32> {gnn.differentiable}, %w: tensor<8x4xf32> {gnn.differentiable}) -> tensor<?x4x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x8xf32>
  %e = tensor.empty(%n) : tensor<?x4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #tr, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %w : tensor<?x4x8xf32>, tensor<8x4xf32>) outs(%e : tensor<?x4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.mulf %a, %c : f32
    linalg.yield %s : f32
  }  -> tensor<?x4x8xf32>
  %z = gnn.spmm sum %g, %y : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  return %z : tensor<?x4x8xf32>
}
