// RUN: gnn-opt %s --gnn-fuse-elementwise -split-input-file | FileCheck %s

// An f32 value read only by an aggregation's elementwise epilogue is
// computed in that epilogue (GIN's backward `(1 + eps) * dh + spmm`); the
// producer's size query asks the producer's init instead.
#id = affine_map<(d0, d1) -> (d0, d1)>
#s = affine_map<(d0, d1) -> (0)>
// CHECK-LABEL: func.func @epilogue
// CHECK-SAME: (%[[G:[^:]*]]: !gnn.graph, %[[EPS:[^:]*]]: tensor<1xf32>, %[[DH:[^:]*]]: tensor<?x8xf32>)
// CHECK: %[[R:.*]] = gnn.spmm sum %[[G]], %[[DH]] reversed
// CHECK-NOT: linalg.generic
// CHECK: linalg.generic {{.*}} ins(%[[EPS]], %[[DH]], %[[R]] :
// CHECK: arith.addf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
func.func @epilogue(%g: !gnn.graph, %eps: tensor<1xf32>, %dh: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %n = tensor.dim %dh, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %p = linalg.generic {indexing_maps = [#s, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%eps, %dh : tensor<1xf32>, tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s1 = arith.addf %a, %one : f32
    %m = arith.mulf %b, %s1 : f32
    linalg.yield %m : f32
  } -> tensor<?x8xf32>
  %r = gnn.spmm sum %g, %dh reversed : tensor<?x8xf32> -> tensor<?x8xf32>
  %m2 = tensor.dim %p, %c0 : tensor<?x8xf32>
  %e2 = tensor.empty(%m2) : tensor<?x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %r : tensor<?x8xf32>, tensor<?x8xf32>) outs(%e2 : tensor<?x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// Left as they are: a producer the function also returns (another user), a
// bf16 producer (rounded when written), a consumer that reads no
// aggregation's result, and a producer that reads a graph op's value.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-8: linalg.generic
// CHECK-NOT: linalg.generic
func.func @kept(%g: !gnn.graph, %x: tensor<?x8xf32>, %h: tensor<?x8xbf16>)
    -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xbf16>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %eh = tensor.empty(%n) : tensor<?x8xbf16>
  %r = gnn.spmm sum %g, %x reversed : tensor<?x8xf32> -> tensor<?x8xf32>
  %rh = gnn.spmm sum %g, %h : tensor<?x8xbf16> -> tensor<?x8xbf16>
  // returned too
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.mulf %a, %a : f32
    linalg.yield %t : f32
  } -> tensor<?x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %r : tensor<?x8xf32>, tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<?x8xf32>
  // bf16
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<?x8xbf16>) outs(%eh : tensor<?x8xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %t = arith.mulf %a, %a : bf16
    linalg.yield %t : bf16
  } -> tensor<?x8xbf16>
  %z = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q, %rh : tensor<?x8xbf16>, tensor<?x8xbf16>) outs(%eh : tensor<?x8xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %o: bf16):
    %t = arith.addf %a, %b : bf16
    linalg.yield %t : bf16
  } -> tensor<?x8xbf16>
  // no aggregation read by the consumer
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %a : f32
    linalg.yield %t : f32
  } -> tensor<?x8xf32>
  %v = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%u : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.exp %a : f32
    linalg.yield %t : f32
  } -> tensor<?x8xf32>
  // the producer reads the aggregation itself
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.mulf %a, %a : f32
    linalg.yield %t : f32
  } -> tensor<?x8xf32>
  %k = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %r : tensor<?x8xf32>, tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.subf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<?x8xf32>
  return %y, %p, %z, %v, %k : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xbf16>, tensor<?x8xf32>, tensor<?x8xf32>
}
