// RUN: gnn-opt %s --gnn-autodiff -split-input-file | FileCheck %s
// RUN: gnn-opt %s --gnn-autodiff=store-edge-values=1 -split-input-file | FileCheck %s --check-prefix=STORE

// A narrow edge product (GINE's lin(edge_attr), a contraction of 4) is made
// again in the backward from the edge values and the weight, like the
// elementwise ops after it: the forward keeps no [E, 8] values (its
// residuals are the arguments e, x, W and b). With store-edge-values=1 it
// is kept, as every edge value is.
// CHECK-LABEL: func.func @gine_fwd
// CHECK: %[[P:.*]] = linalg.matmul
// CHECK: return %{{.*}}, %arg2, %arg1, %arg3, %arg4 : tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x8xf32>, tensor<8x4xf32>, tensor<8xf32>
// CHECK-LABEL: func.func @gine_bwd
// CHECK-SAME: (%arg0: !gnn.graph, %arg1: tensor<?x4xf32> {gnn.domain = "edge"}, %arg2: tensor<?x8xf32>, %arg3: tensor<8x4xf32>, %arg4: tensor<8xf32>, %arg5: tensor<?x8xf32>)
// CHECK: linalg.matmul {{.*}} ins(%arg1, %arg3 : tensor<?x4xf32>, tensor<8x4xf32>)
// STORE-LABEL: func.func @gine_fwd
// STORE: %[[P:.*]] = linalg.matmul
// STORE: return %{{.*}}, %[[P]],
// STORE-LABEL: func.func @gine_bwd
// STORE-NOT: linalg.matmul {{.*}} ins(%arg{{[0-9]+}}, %arg{{[0-9]+}} : tensor<?x4xf32>, tensor<8x4xf32>)
#b = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @gine(%g: !gnn.graph, %x: tensor<?x8xf32> {gnn.differentiable}, %e: tensor<?x4xf32> {gnn.domain = "edge"}, %w: tensor<8x4xf32> {gnn.differentiable}, %bias: tensor<8xf32> {gnn.differentiable}) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %e, %c0 : tensor<?x4xf32>
  %0 = tensor.empty(%n) : tensor<?x8xf32>
  %rows = linalg.generic {indexing_maps = [#b, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<8xf32>) outs(%0 : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<?x8xf32>
  %elin = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%e, %w : tensor<?x4xf32>, tensor<8x4xf32>) outs(%rows : tensor<?x8xf32>) -> tensor<?x8xf32>
  %xj = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  %1 = tensor.empty(%n) : tensor<?x8xf32>
  %msg = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%xj, %elin : tensor<?x8xf32>, tensor<?x8xf32>) outs(%1 : tensor<?x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<?x8xf32>
  %agg = gnn.reduce sum %g, %msg : tensor<?x8xf32> -> tensor<?x8xf32>
  return %agg : tensor<?x8xf32>
}

// -----

// A contraction of 9 is kept from the forward: made again it would be a
// second GEMM writing the same [E, 8] values.
// CHECK-LABEL: func.func @wide_fwd
// CHECK: %[[P:.*]] = linalg.matmul
// CHECK: return %{{.*}}, %[[P]],
// CHECK-LABEL: func.func @wide_bwd
// CHECK-NOT: linalg.matmul {{.*}} tensor<?x9xf32>, tensor<8x9xf32>
#b = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @wide(%g: !gnn.graph, %x: tensor<?x8xf32> {gnn.differentiable}, %e: tensor<?x9xf32> {gnn.domain = "edge"}, %w: tensor<8x9xf32> {gnn.differentiable}, %bias: tensor<8xf32> {gnn.differentiable}) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %e, %c0 : tensor<?x9xf32>
  %0 = tensor.empty(%n) : tensor<?x8xf32>
  %rows = linalg.generic {indexing_maps = [#b, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<8xf32>) outs(%0 : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<?x8xf32>
  %elin = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%e, %w : tensor<?x9xf32>, tensor<8x9xf32>) outs(%rows : tensor<?x8xf32>) -> tensor<?x8xf32>
  %xj = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  %1 = tensor.empty(%n) : tensor<?x8xf32>
  %msg = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%xj, %elin : tensor<?x8xf32>, tensor<?x8xf32>) outs(%1 : tensor<?x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<?x8xf32>
  %agg = gnn.reduce sum %g, %msg : tensor<?x8xf32> -> tensor<?x8xf32>
  return %agg : tensor<?x8xf32>
}
