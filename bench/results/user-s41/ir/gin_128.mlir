#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (0)>
#map2 = affine_map<(d0, d1) -> (d1)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d2)>
#map4 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map5 = affine_map<(d0, d1, d2) -> (d0, d1)>
module {
  func.func @gin_layer(%arg0: !gnn.graph, %arg1: tensor<?x128xf32> {gnn.differentiable}, %arg2: tensor<1xf32> {gnn.differentiable}, %arg3: tensor<128x128xf32> {gnn.differentiable}, %arg4: tensor<128xf32> {gnn.differentiable}) -> tensor<?x128xf32> {
    %c0 = arith.constant 0 : index
    %dim = tensor.dim %arg1, %c0 : tensor<?x128xf32>
    %cst = arith.constant 1.000000e+00 : f32
    %result = gnn.spmm sum %arg0, %arg1 : tensor<?x128xf32> -> tensor<?x128xf32>
    %dim_0 = tensor.dim %arg1, %c0 : tensor<?x128xf32>
    %0 = tensor.empty(%dim_0) : tensor<?x128xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg1, %result, %arg2 : tensor<?x128xf32>, tensor<?x128xf32>, tensor<1xf32>) outs(%0 : tensor<?x128xf32>) {
    ^bb0(%in: f32, %in_1: f32, %in_2: f32, %out: f32):
      %5 = arith.addf %cst, %in_2 : f32
      %6 = arith.mulf %5, %in : f32
      %7 = arith.addf %6, %in_1 : f32
      linalg.yield %7 : f32
    } -> tensor<?x128xf32>
    %2 = tensor.empty(%dim) : tensor<?x128xf32>
    %3 = linalg.generic {indexing_maps = [#map2, #map], iterator_types = ["parallel", "parallel"]} ins(%arg4 : tensor<128xf32>) outs(%2 : tensor<?x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<?x128xf32>
    %4 = linalg.matmul indexing_maps = [#map3, #map4, #map5] ins(%1, %arg3 : tensor<?x128xf32>, tensor<128x128xf32>) outs(%3 : tensor<?x128xf32>) -> tensor<?x128xf32>
    return %4 : tensor<?x128xf32>
  }
}
