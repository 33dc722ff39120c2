// RUN: gnn-opt %s --pass-pipeline='builtin.module(func.func(gnn-form-kernel-groups))' | FileCheck %s

// The backward of ResGatedGraphConv's message sigmoid(k_i + q_j) * v_j (as
// gnnc.MessagePassing traces it): the gate's gradient %5 reads the gather of
// v at the sources (%1) and is summed to both ends; the gate itself (%8) is
// summed to the sources. %8's init is sized by `tensor.dim %1`, a gather it
// does not read. Every edge tensor of the graph has its edge count, so the
// query is read from %8's own input %0 instead, and no group has to write
// the E x 16 gather %1 to memory for the size alone: three aggregation
// groups, each recomputing the edge values it reads, and no edge_map group.

#map = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @resgated_bwd
// CHECK-NOT: edge_map
// CHECK: gnn.kernel_group "aggregation_0" family = aggregation
// CHECK-NOT: gnn.gather src
// CHECK: tensor.dim %{{.*}}
// CHECK: gnn.reduce sum %{{.*}} reversed
// CHECK: gnn.kernel_group "aggregation_1" family = aggregation
// CHECK: gnn.gather src
// CHECK: gnn.kernel_group "aggregation_2" family = aggregation
// CHECK: gnn.gather src
// CHECK-NOT: edge_map
func.func @resgated_bwd(%arg0: !gnn.graph, %arg1: tensor<?x16xf32>, %arg2: tensor<?x16xf32>, %arg3: tensor<?x16xf32>, %arg4: tensor<?x16xf32>) -> (tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) {
  %cst = arith.constant -1.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %cst_0 = arith.constant 0.000000e+00 : f32
  %cst_1 = arith.constant 1.000000e+00 : f32
  %0 = gnn.sddmm add %arg0, %arg2, %arg3 : tensor<?x16xf32>, tensor<?x16xf32> -> tensor<?x16xf32>
  %1 = gnn.gather src %arg0, %arg1 : tensor<?x16xf32> -> tensor<?x16xf32>
  %2 = gnn.gather dst %arg0, %arg4 : tensor<?x16xf32> -> tensor<?x16xf32>
  %dim = tensor.dim %0, %c0 : tensor<?x16xf32>
  %3 = tensor.empty(%dim) : tensor<?x16xf32>
  %4 = linalg.fill ins(%cst_0 : f32) outs(%3 : tensor<?x16xf32>) -> tensor<?x16xf32>
  %5 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%0, %1, %2 : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) outs(%4 : tensor<?x16xf32>) {
  ^bb0(%in: f32, %in_5: f32, %in_6: f32, %out: f32):
    %9 = arith.negf %in : f32
    %10 = math.exp %9 : f32
    %11 = arith.mulf %10, %cst : f32
    %12 = arith.addf %10, %cst_1 : f32
    %13 = arith.divf %cst_1, %12 : f32
    %14 = arith.mulf %11, %13 : f32
    %15 = arith.negf %14 : f32
    %16 = arith.divf %15, %12 : f32
    %17 = arith.mulf %16, %in_5 : f32
    %18 = arith.mulf %in_6, %17 : f32
    %19 = arith.addf %out, %18 : f32
    linalg.yield %19 : f32
  } -> tensor<?x16xf32>
  %dim_2 = tensor.dim %1, %c0 : tensor<?x16xf32>
  %6 = tensor.empty(%dim_2) : tensor<?x16xf32>
  %7 = linalg.fill ins(%cst_0 : f32) outs(%6 : tensor<?x16xf32>) -> tensor<?x16xf32>
  %8 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%0, %2 : tensor<?x16xf32>, tensor<?x16xf32>) outs(%7 : tensor<?x16xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %9 = arith.negf %in : f32
    %10 = math.exp %9 : f32
    %11 = arith.addf %10, %cst_1 : f32
    %12 = arith.divf %cst_1, %11 : f32
    %13 = arith.mulf %in_5, %12 : f32
    %14 = arith.addf %out, %13 : f32
    linalg.yield %14 : f32
  } -> tensor<?x16xf32>
  %result = gnn.reduce sum %arg0, %8 reversed : tensor<?x16xf32> -> tensor<?x16xf32>
  %result_3 = gnn.reduce sum %arg0, %5 reversed : tensor<?x16xf32> -> tensor<?x16xf32>
  %result_4 = gnn.reduce sum %arg0, %5 : tensor<?x16xf32> -> tensor<?x16xf32>
  return %result_4, %result_3, %result : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>
}
