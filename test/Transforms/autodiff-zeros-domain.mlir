// A message-passing layer's function (gnnc.MessagePassing, message
// torch.where(x_j > x_i, x_j * 2, edge_attr) + x_j.masked_fill(x_j < 0, 0),
// aggregated by sum): its backward sums, per node, an edge gradient that is
// partly the zeros autodiff makes for a select's other branch, an empty
// tensor sized `tensor.dim %e, 0` of an edge value. The domain inference did
// not follow that size, so the backward did not verify once printed (a
// gnn.reduce whose input could be node or edge rows). An empty tensor sized
// by another's rows now has its domain.
// RUN: gnn-opt --gnn-autodiff %s | gnn-opt | FileCheck %s
// CHECK: func.func @mp__zoo_bwd
// CHECK: gnn.reduce sum

#map = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func @mp__zoo(%arg0: !gnn.graph, %arg1: tensor<?x3xf64> {gnn.differentiable}, %arg2: tensor<?x3xf64> {gnn.differentiable, gnn.domain = "edge"}) -> tensor<?x3xf64> {
    %0 = gnn.gather src %arg0, %arg1 : tensor<?x3xf64> -> tensor<?x3xf64>
    %1 = gnn.gather dst %arg0, %arg1 : tensor<?x3xf64> -> tensor<?x3xf64>
    %c0 = arith.constant 0 : index
    %dim = tensor.dim %arg1, %c0 : tensor<?x3xf64>
    %2 = tensor.empty(%dim) : tensor<?x3xf64>
    %cst = arith.constant 2.000000e+00 : f64
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<?x3xf64>) outs(%2 : tensor<?x3xf64>) {
    ^bb0(%in: f64, %out: f64):
      %10 = arith.mulf %in, %cst : f64
      linalg.yield %10 : f64
    } -> tensor<?x3xf64>
    %4 = gnn.gather src %arg0, %3 : tensor<?x3xf64> -> tensor<?x3xf64>
    %5 = tensor.empty(%dim) : tensor<?x3xf64>
    %cst_0 = arith.constant 0.000000e+00 : f64
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<?x3xf64>) outs(%5 : tensor<?x3xf64>) {
    ^bb0(%in: f64, %out: f64):
      %10 = arith.cmpf olt, %in, %cst_0 : f64
      %11 = arith.select %10, %cst_0, %in : f64
      linalg.yield %11 : f64
    } -> tensor<?x3xf64>
    %7 = gnn.gather src %arg0, %6 : tensor<?x3xf64> -> tensor<?x3xf64>
    %dim_1 = tensor.dim %0, %c0 : tensor<?x3xf64>
    %8 = tensor.empty(%dim_1) : tensor<?x3xf64>
    %9 = linalg.generic {indexing_maps = [#map, #map, #map, #map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%0, %1, %4, %arg2, %7 : tensor<?x3xf64>, tensor<?x3xf64>, tensor<?x3xf64>, tensor<?x3xf64>, tensor<?x3xf64>) outs(%8 : tensor<?x3xf64>) {
    ^bb0(%in: f64, %in_2: f64, %in_3: f64, %in_4: f64, %in_5: f64, %out: f64):
      %10 = arith.cmpf ogt, %in, %in_2 : f64
      %11 = arith.select %10, %in_3, %in_4 : f64
      %12 = arith.addf %11, %in_5 : f64
      linalg.yield %12 : f64
    } -> tensor<?x3xf64>
    %result = gnn.reduce sum %arg0, %9 : tensor<?x3xf64> -> tensor<?x3xf64>
    return %result : tensor<?x3xf64>
  }
}
