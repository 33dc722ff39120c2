#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%g1: !gnn.graph, %g2: !gnn.graph, %x: tensor<?x4xf32> {gnn.differentiable}) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %s2 = gnn.gather src %g2, %x : tensor<?x4xf32> -> tensor<?x4xf32>
  %s1 = gnn.gather src %g1, %x : tensor<?x4xf32> -> tensor<?x4xf32>
  %n = tensor.dim %s1, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %t1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%s1 : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<?x4xf32>
  %y = gnn.reduce sum %g1, %t1 : tensor<?x4xf32> -> tensor<?x4xf32>
  return %s2, %y : tensor<?x4xf32>, tensor<?x4xf32>
}
