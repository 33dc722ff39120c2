// RUN: gnn-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(gnn-form-kernel-groups))' | FileCheck %s

// A graph op with an elementwise consumer chain: one group, the chain inside,
// the empty init of the consumer replaced by the producer (so the size query
// on the edge tensor does not block the fusion).

#id2 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @sddmm_then_leaky_relu
func.func @sddmm_then_leaky_relu(%g: !gnn.graph, %a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %s = arith.constant 0.2 : f32
  // CHECK-NOT: tensor.empty
  // CHECK: %[[G:.*]] = gnn.kernel_group "sddmm_0" family = edge_map -> tensor<?x4xf32> {
  // CHECK:   %[[E:.*]] = gnn.sddmm add
  // CHECK:   %[[L:.*]] = linalg.generic {{.*}} ins(%[[E]] : tensor<?x4xf32>) outs(%[[E]] : tensor<?x4xf32>)
  // CHECK:   gnn.yield %[[L]] : tensor<?x4xf32>
  // CHECK: return %[[G]]
  %e = gnn.sddmm add %g, %a, %b : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %n = tensor.dim %e, %c0 : tensor<?x4xf32>
  %init = tensor.empty(%n) : tensor<?x4xf32>
  %l = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%e : tensor<?x4xf32>) outs(%init : tensor<?x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %s : f32
    %p = arith.cmpf ogt, %v, %z : f32
    %r = arith.select %p, %v, %m : f32
    linalg.yield %r : f32
  } -> tensor<?x4xf32>
  return %l : tensor<?x4xf32>
}

// -----

// A consumer that is not the only user stays outside; matmuls and fills are
// not grouped; a reduction becomes an elementwise group of its own.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @two_users
func.func @two_users(%g: !gnn.graph, %x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> (tensor<?x8xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  // CHECK: linalg.fill
  // CHECK: linalg.matmul
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %h = linalg.matmul ins(%x, %w : tensor<?x8xf32>, tensor<8x8xf32>) outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
  // CHECK: %[[S:.*]] = gnn.kernel_group "spmm_0" family = aggregation -> tensor<?x8xf32> {
  // CHECK-NEXT: gnn.spmm sum
  // CHECK-NEXT: gnn.yield
  %s = gnn.spmm sum %g, %h : tensor<?x8xf32> -> tensor<?x8xf32>
  // CHECK: gnn.kernel_group "elementwise_0" family = elementwise
  // CHECK: gnn.kernel_group "elementwise_1" family = elementwise
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<?x8xf32>
  %er = tensor.empty(%n) : tensor<?xf32>
  %fr = linalg.fill ins(%z : f32) outs(%er : tensor<?xf32>) -> tensor<?xf32>
  %b = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<?x8xf32>) outs(%fr : tensor<?xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = arith.addf %v, %o : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  return %a, %b : tensor<?x8xf32>, tensor<?xf32>
}

// -----

// Every graph op gets its own group, named after its kind, with the family
// of kernel it becomes (the gather has two users: nothing to fuse).
// CHECK-LABEL: func.func @names
// CHECK: gnn.kernel_group "degree_0" family = degree
// CHECK: gnn.kernel_group "gather_0" family = edge_map
// CHECK: gnn.kernel_group "reduce_0" family = aggregation
// CHECK: gnn.kernel_group "edge_softmax_0" family = edge_softmax
// CHECK: gnn.kernel_group "reduce_1" family = aggregation
func.func @names(%g: !gnn.graph, %x: tensor<?x2xf32>) -> (tensor<?xf32>, tensor<?x2xf32>, tensor<?x2xf32>) {
  %d = gnn.degree %g : tensor<?xf32>
  %e = gnn.gather src %g, %x : tensor<?x2xf32> -> tensor<?x2xf32>
  %r = gnn.reduce max %g, %e : tensor<?x2xf32> -> tensor<?x2xf32>
  %s = gnn.edge_softmax %g, %e : tensor<?x2xf32>
  %m = gnn.reduce sum %g, %s reversed : tensor<?x2xf32> -> tensor<?x2xf32>
  return %d, %r, %m : tensor<?xf32>, tensor<?x2xf32>, tensor<?x2xf32>
}

// -----

// A size query on the sddmm after its absorbable consumer: the group is
// placed at its last member, so the consumer stays out (a group of its own)
// and the tensor.dim stays where it is.
#idq = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @size_query_after_consumer
// CHECK: %[[E:.*]] = gnn.kernel_group "sddmm_0" family = edge_map
// CHECK-NEXT: gnn.sddmm mul
// CHECK-NEXT: gnn.yield
// CHECK: gnn.kernel_group "elementwise_0" family = elementwise
// CHECK: tensor.dim %[[E]]
func.func @size_query_after_consumer(%g: !gnn.graph, %x: tensor<?x8xf32>, %y: tensor<?x8xf32> {gnn.domain = "edge"}) -> (tensor<?x8xf32>, index) {
  %c0 = arith.constant 0 : index
  %e = gnn.sddmm mul %g, %x, %x : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  %m = linalg.generic {indexing_maps = [#idq, #idq], iterator_types = ["parallel", "parallel"]} ins(%e : tensor<?x8xf32>) outs(%y : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<?x8xf32>
  %n = tensor.dim %e, %c0 : tensor<?x8xf32>
  return %m, %n : tensor<?x8xf32>, index
}

// -----

// Static leading dimensions fix the graph's counts: recorded on the
// function, which a Program checks each graph against (the kernels are
// sized from the graph, not from the types).

// CHECK-LABEL: func.func @fixed
// CHECK-SAME: gnn.fixed_counts = {edge = 30 : i64, node = 7 : i64}
func.func @fixed(%g: !gnn.graph, %x: tensor<?x8xf32>, %w: tensor<30xf32> {gnn.domain = "edge"}) -> tensor<7x8xf32> {
  %0 = gnn.spmm sum %g, %x weights(%w : tensor<30xf32>) : tensor<?x8xf32> -> tensor<7x8xf32>
  return %0 : tensor<7x8xf32>
}

// -----

// CHECK-LABEL: func.func @any_size
// CHECK-NOT: gnn.fixed_counts
func.func @any_size(%g: !gnn.graph, %x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %0 = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
