#map = affine_map<(d0, d1) -> (d1)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d2)>
#map3 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map4 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map5 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map6 = affine_map<(d0, d1) -> (d0)>
module {
  func.func @gatv2_layer(%arg0: !gnn.graph, %arg1: tensor<?x128xf32> {gnn.differentiable}, %arg2: tensor<128x128xf32> {gnn.differentiable}, %arg3: tensor<128xf32> {gnn.differentiable}, %arg4: tensor<128x128xf32> {gnn.differentiable}, %arg5: tensor<128xf32> {gnn.differentiable}, %arg6: tensor<4x32xf32> {gnn.differentiable}, %arg7: tensor<128xf32> {gnn.differentiable}, %arg8: tensor<?xf32> {gnn.domain = "edge"}) -> tensor<?x128xf32> {
    %c0 = arith.constant 0 : index
    %dim = tensor.dim %arg1, %c0 : tensor<?x128xf32>
    %0 = tensor.empty(%dim) : tensor<?x128xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg3 : tensor<128xf32>) outs(%0 : tensor<?x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<?x128xf32>
    %2 = linalg.matmul indexing_maps = [#map2, #map3, #map4] ins(%arg1, %arg2 : tensor<?x128xf32>, tensor<128x128xf32>) outs(%1 : tensor<?x128xf32>) -> tensor<?x128xf32>
    %expanded = tensor.expand_shape %2 [[0], [1, 2]] output_shape [%dim, 4, 32] : tensor<?x128xf32> into tensor<?x4x32xf32>
    %3 = tensor.empty(%dim) : tensor<?x128xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg5 : tensor<128xf32>) outs(%3 : tensor<?x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<?x128xf32>
    %5 = linalg.matmul indexing_maps = [#map2, #map3, #map4] ins(%arg1, %arg4 : tensor<?x128xf32>, tensor<128x128xf32>) outs(%4 : tensor<?x128xf32>) -> tensor<?x128xf32>
    %expanded_0 = tensor.expand_shape %5 [[0], [1, 2]] output_shape [%dim, 4, 32] : tensor<?x128xf32> into tensor<?x4x32xf32>
    %6 = gnn.sddmm add %arg0, %expanded, %expanded_0 : tensor<?x4x32xf32>, tensor<?x4x32xf32> -> tensor<?x4x32xf32>
    %dim_1 = tensor.dim %6, %c0 : tensor<?x4x32xf32>
    %7 = tensor.empty(%dim_1) : tensor<?x4xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %8 = linalg.fill ins(%cst : f32) outs(%7 : tensor<?x4xf32>) -> tensor<?x4xf32>
    %cst_2 = arith.constant 2.000000e-01 : f32
    %9 = linalg.generic {indexing_maps = [#map5, #map3, #map4], iterator_types = ["parallel", "parallel", "reduction"]} ins(%6, %arg6 : tensor<?x4x32xf32>, tensor<4x32xf32>) outs(%8 : tensor<?x4xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %14 = arith.mulf %in, %cst_2 : f32
      %15 = arith.cmpf ogt, %in, %cst : f32
      %16 = arith.select %15, %in, %14 : f32
      %17 = arith.mulf %16, %in_7 : f32
      %18 = arith.addf %out, %17 : f32
      linalg.yield %18 : f32
    } -> tensor<?x4xf32>
    %dim_3 = tensor.dim %9, %c0 : tensor<?x4xf32>
    %cst_4 = arith.constant 5.000000e-01 : f32
    %cst_5 = arith.constant 0xFF800000 : f32
    %10 = tensor.empty(%dim_3) : tensor<?x4xf32>
    %11 = linalg.generic {indexing_maps = [#map1, #map6, #map1], iterator_types = ["parallel", "parallel"]} ins(%9, %arg8 : tensor<?x4xf32>, tensor<?xf32>) outs(%10 : tensor<?x4xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %14 = arith.cmpf ogt, %in_7, %cst_4 : f32
      %15 = arith.select %14, %in, %cst_5 : f32
      linalg.yield %15 : f32
    } -> tensor<?x4xf32>
    %result = gnn.edge_softmax %arg0, %11 : tensor<?x4xf32>
    %result_6 = gnn.spmm sum %arg0, %expanded weights(%result : tensor<?x4xf32>) : tensor<?x4x32xf32> -> tensor<?x4x32xf32>
    %collapsed = tensor.collapse_shape %result_6 [[0], [1, 2]] : tensor<?x4x32xf32> into tensor<?x128xf32>
    %12 = tensor.empty(%dim) : tensor<?x128xf32>
    %13 = linalg.generic {indexing_maps = [#map1, #map, #map1], iterator_types = ["parallel", "parallel"]} ins(%collapsed, %arg7 : tensor<?x128xf32>, tensor<128xf32>) outs(%12 : tensor<?x128xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %14 = arith.addf %in, %in_7 : f32
      linalg.yield %14 : f32
    } -> tensor<?x128xf32>
    return %13 : tensor<?x128xf32>
  }
}
