#id = affine_map<(d0, d1) -> (d0, d1)>
#s = affine_map<(d0, d1) -> (d0, 0)>
func.func @f(%g: !gnn.graph, %x: tensor<?x8xf32> {gnn.differentiable}, %n1: tensor<?x1xf32> {gnn.differentiable}) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #s, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %n1 : tensor<?x8xf32>, tensor<?x1xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  }  -> tensor<?x8xf32>
  %t = gnn.spmm sum %g, %y : tensor<?x8xf32> -> tensor<?x8xf32>
  return %t : tensor<?x8xf32>
}
