#map = affine_map<(d0, d1) -> (d1)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d2)>
#map3 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map4 = affine_map<(d0, d1, d2) -> (d0, d1)>
module {
  func.func @sage_mean_layer(%arg0: !gnn.graph, %arg1: tensor<?x128xf32> {gnn.differentiable}, %arg2: tensor<128x128xf32> {gnn.differentiable}, %arg3: tensor<128xf32> {gnn.differentiable}, %arg4: tensor<128x128xf32> {gnn.differentiable}) -> tensor<?x128xf32> {
    %c0 = arith.constant 0 : index
    %dim = tensor.dim %arg1, %c0 : tensor<?x128xf32>
    %0 = tensor.empty(%dim) : tensor<?x128xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg3 : tensor<128xf32>) outs(%0 : tensor<?x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<?x128xf32>
    %2 = linalg.matmul indexing_maps = [#map2, #map3, #map4] ins(%arg1, %arg4 : tensor<?x128xf32>, tensor<128x128xf32>) outs(%1 : tensor<?x128xf32>) -> tensor<?x128xf32>
    %result = gnn.spmm mean %arg0, %arg1 : tensor<?x128xf32> -> tensor<?x128xf32>
    %3 = linalg.matmul indexing_maps = [#map2, #map3, #map4] ins(%result, %arg2 : tensor<?x128xf32>, tensor<128x128xf32>) outs(%2 : tensor<?x128xf32>) -> tensor<?x128xf32>
    return %3 : tensor<?x128xf32>
  }
}
