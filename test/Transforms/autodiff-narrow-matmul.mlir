// RUN: gnn-opt %s --gnn-autodiff | FileCheck %s

// A matmul over the edges is kept from the forward, a narrow one (GINE's
// lin(edge_attr), a contraction of 4) too: made again in the backward as a
// map in its edge pass (gnn-expand-narrow-matmuls) it was slower there than
// reading the kept values (bench/results/checks-s83/). The forward returns
// it; the backward reads it and makes no product of e and W.
// CHECK-LABEL: func.func @gine_fwd
// CHECK: %[[P:.*]] = linalg.matmul
// CHECK: return %{{.*}}, %[[P]],
// CHECK-LABEL: func.func @gine_bwd
// CHECK-NOT: linalg.matmul {{.*}} : tensor<?x4xf32>, tensor<8x4xf32>)
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
