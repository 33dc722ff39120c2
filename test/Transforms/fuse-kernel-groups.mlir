// RUN: gnn-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(gnn-form-kernel-groups{fuse=attention,aggregation,prologue}))' | gnn-opt -split-input-file | FileCheck %s
// RUN: gnn-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(gnn-form-kernel-groups{fuse=attention,aggregation,prologue}))' -mlir-print-op-generic | gnn-opt -split-input-file | FileCheck %s
// RUN: gnn-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(gnn-form-kernel-groups{fuse=none}))' | FileCheck %s --check-prefix=NONE
// RUN: gnn-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(gnn-form-kernel-groups{fuse=attention}))' | FileCheck %s --check-prefix=ATT

// A user-defined score (not among the examples): tanh of the per-feature
// product of source and destination rows, summed over the features, then
// softmax and the weighted sum. One attention group holds it all, the bias
// on the result included. The tanh writes into the sddmm's result (its init
// is never read); the size queries sizing the reduction's init move into the
// group because they read the sddmm's result.

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>
#bias = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @tanh_score
// CHECK-NOT: gnn.kernel_group
// CHECK: %[[G:.*]] = gnn.kernel_group "attention_0" family = attention -> tensor<?x4x8xf32> {
// CHECK-NEXT: %[[E:.*]] = gnn.sddmm mul
// CHECK-NEXT: %[[T:.*]] = linalg.generic {{.*}} ins(%[[E]] : tensor<?x4x8xf32>) outs(%[[E]] : tensor<?x4x8xf32>)
// CHECK: math.tanh
// CHECK: %[[N:.*]] = tensor.dim %[[T]]
// CHECK-NEXT: %[[I:.*]] = tensor.empty(%[[N]]) : tensor<?x4xf32>
// CHECK-NEXT: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[I]] : tensor<?x4xf32>)
// CHECK-NEXT: %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[T]] : tensor<?x4x8xf32>) outs(%[[Z]] : tensor<?x4xf32>)
// CHECK: %[[A:.*]] = gnn.edge_softmax %{{.*}}, %[[S]]
// CHECK-NEXT: %[[O:.*]] = gnn.spmm sum %{{.*}}, %{{.*}} weights(%[[A]] : tensor<?x4xf32>)
// CHECK-NEXT: %[[B:.*]] = linalg.generic {{.*}} ins(%[[O]], %{{.*}} : tensor<?x4x8xf32>, tensor<4x8xf32>) outs(%[[O]] : tensor<?x4x8xf32>)
// CHECK: gnn.yield %[[B]] : tensor<?x4x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[G]]
// NONE-LABEL: func.func @tanh_score
// NONE-NOT: attention
// NONE: gnn.kernel_group "sddmm_0" family = edge_map
// NONE: gnn.kernel_group "elementwise_0" family = elementwise
// NONE: gnn.kernel_group "edge_softmax_0" family = edge_softmax
// NONE: gnn.kernel_group "spmm_0" family = aggregation
// NONE-NOT: attention
// ATT-LABEL: func.func @tanh_score
// ATT: gnn.kernel_group "attention_0" family = attention
func.func @tanh_score(%g: !gnn.graph, %x: tensor<?x4x8xf32>, %v: tensor<?x4x8xf32>, %b: tensor<4x8xf32>) -> tensor<?x4x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %e = gnn.sddmm mul %g, %x, %x : tensor<?x4x8xf32>, tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  %ne = tensor.dim %e, %c0 : tensor<?x4x8xf32>
  %te = tensor.empty(%ne) : tensor<?x4x8xf32>
  %t = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e : tensor<?x4x8xf32>) outs(%te : tensor<?x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<?x4x8xf32>
  %nt = tensor.dim %t, %c0 : tensor<?x4x8xf32>
  %se = tensor.empty(%nt) : tensor<?x4xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<?x4xf32>) -> tensor<?x4xf32>
  %s = linalg.generic {indexing_maps = [#id3, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%t : tensor<?x4x8xf32>) outs(%sz : tensor<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<?x4xf32>
  %alpha = gnn.edge_softmax %g, %s : tensor<?x4xf32>
  %agg = gnn.spmm sum %g, %v weights(%alpha : tensor<?x4xf32>) : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  %n = tensor.dim %agg, %c0 : tensor<?x4x8xf32>
  %oe = tensor.empty(%n) : tensor<?x4x8xf32>
  %out = linalg.generic {indexing_maps = [#id3, #bias, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%agg, %b : tensor<?x4x8xf32>, tensor<4x8xf32>) outs(%oe : tensor<?x4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %r = arith.addf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<?x4x8xf32>
  return %out : tensor<?x4x8xf32>
}

// -----

// Gather-apply-reduce: the source rows scaled by an edge weight and reduced
// at the destinations, in one kernel; the edge x feature product never
// reaches memory.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @gather_scale_reduce
// CHECK: %[[G:.*]] = gnn.kernel_group "aggregation_0" family = aggregation -> tensor<?x16xf32> {
// CHECK-NEXT: %[[E:.*]] = gnn.gather src
// CHECK-NEXT: %[[M:.*]] = linalg.generic {{.*}} ins(%[[E]], %{{.*}} : tensor<?x16xf32>, tensor<?xf32>) outs(%[[E]] : tensor<?x16xf32>)
// CHECK: %[[R:.*]] = gnn.reduce max %{{.*}}, %[[M]]
// CHECK-NEXT: gnn.yield %[[R]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[G]]
// NONE-LABEL: func.func @gather_scale_reduce
// NONE: gnn.kernel_group "gather_0" family = edge_map
// NONE: gnn.kernel_group "reduce_0" family = aggregation
// ATT-LABEL: func.func @gather_scale_reduce
// ATT: gnn.kernel_group "gather_0" family = edge_map
// ATT: gnn.kernel_group "reduce_0" family = aggregation
func.func @gather_scale_reduce(%g: !gnn.graph, %x: tensor<?x16xf32>, %w: tensor<?xf32> {gnn.domain = "edge"}) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %e = gnn.gather src %g, %x : tensor<?x16xf32> -> tensor<?x16xf32>
  %n = tensor.dim %e, %c0 : tensor<?x16xf32>
  %init = tensor.empty(%n) : tensor<?x16xf32>
  %m = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%e, %w : tensor<?x16xf32>, tensor<?xf32>) outs(%init : tensor<?x16xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %r = arith.mulf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<?x16xf32>
  %r = gnn.reduce max %g, %m : tensor<?x16xf32> -> tensor<?x16xf32>
  return %r : tensor<?x16xf32>
}

// -----

// Edge values computed by an sddmm and an elementwise op, used as the
// weights of an spmm (no softmax): one aggregation kernel.

#id1 = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @sigmoid_weights
// CHECK: gnn.kernel_group "aggregation_0" family = aggregation -> tensor<?x32xf32> {
// CHECK-NEXT: gnn.sddmm dot
// CHECK-NEXT: linalg.generic
// CHECK: gnn.spmm mean
// CHECK-NEXT: gnn.yield
// NONE-LABEL: func.func @sigmoid_weights
// NONE: gnn.kernel_group "sddmm_0" family = edge_map
// NONE: gnn.kernel_group "spmm_0" family = aggregation
func.func @sigmoid_weights(%g: !gnn.graph, %x: tensor<?x32xf32>) -> tensor<?x32xf32> {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %s = gnn.sddmm dot %g, %x, %x : tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?xf32>
  %n = tensor.dim %s, %c0 : tensor<?xf32>
  %init = tensor.empty(%n) : tensor<?xf32>
  %w = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%s : tensor<?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.negf %a : f32
    %x0 = math.exp %m : f32
    %d = arith.addf %x0, %one : f32
    %r = arith.divf %one, %d : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %agg = gnn.spmm mean %g, %x weights(%w : tensor<?xf32>) : tensor<?x32xf32> -> tensor<?x32xf32>
  return %agg : tensor<?x32xf32>
}

// -----

// The attention weights are also returned: they must reach memory, so the
// attention rule does not apply and the pipeline stays in three groups.

// CHECK-LABEL: func.func @alpha_returned
// CHECK-NOT: attention
// CHECK: %[[A:.*]] = gnn.kernel_group "edge_softmax_0" family = edge_softmax
// CHECK: gnn.kernel_group "spmm_0" family = aggregation
// CHECK-NEXT: gnn.spmm sum %{{.*}}, %{{.*}} weights(%[[A]] : tensor<?x4xf32>)
func.func @alpha_returned(%g: !gnn.graph, %q: tensor<?x4x16xf32>, %v: tensor<?x4x16xf32>) -> (tensor<?x4x16xf32>, tensor<?x4xf32>) {
  %s = gnn.sddmm dot %g, %q, %q : tensor<?x4x16xf32>, tensor<?x4x16xf32> -> tensor<?x4xf32>
  %alpha = gnn.edge_softmax %g, %s : tensor<?x4xf32>
  %agg = gnn.spmm sum %g, %v weights(%alpha : tensor<?x4xf32>) : tensor<?x4x16xf32> -> tensor<?x4x16xf32>
  return %agg, %alpha : tensor<?x4x16xf32>, tensor<?x4xf32>
}

// -----

// The softmax's log-sum-exp is returned: the attention group returns it as a
// second result (the weights themselves stay inside).

// CHECK-LABEL: func.func @lse_returned
// CHECK: %[[G:.*]]:2 = gnn.kernel_group "attention_0" family = attention -> tensor<?x4x16xf32>, tensor<?x4xf32> {
// CHECK: %[[A:.*]], %[[L:.*]] = gnn.edge_softmax
// CHECK: %[[O:.*]] = gnn.spmm sum %{{.*}} weights(%[[A]] : tensor<?x4xf32>)
// CHECK: gnn.yield %[[O]], %[[L]] : tensor<?x4x16xf32>, tensor<?x4xf32>
// CHECK: return %[[G]]#0, %[[G]]#1
func.func @lse_returned(%g: !gnn.graph, %q: tensor<?x4x16xf32>, %v: tensor<?x4x16xf32>) -> (tensor<?x4x16xf32>, tensor<?x4xf32>) {
  %s = gnn.sddmm dot %g, %q, %q : tensor<?x4x16xf32>, tensor<?x4x16xf32> -> tensor<?x4xf32>
  %alpha, %lse = gnn.edge_softmax %g, %s : tensor<?x4xf32>, tensor<?x4xf32>
  %agg = gnn.spmm sum %g, %v weights(%alpha : tensor<?x4xf32>) : tensor<?x4x16xf32> -> tensor<?x4x16xf32>
  return %agg, %lse : tensor<?x4x16xf32>, tensor<?x4xf32>
}

// -----

// An op between the softmax and the spmm reads the log-sum-exp: a group
// placed at the spmm would come after it, so the attention rule does not
// apply; the softmax group returns both of its results.

#n2 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @lse_read_early
// CHECK-NOT: attention
// CHECK: %[[SM:.*]]:2 = gnn.kernel_group "edge_softmax_0" family = edge_softmax -> tensor<?x4xf32>, tensor<?x4xf32>
// CHECK: gnn.spmm sum %{{.*}}, %{{.*}} weights(%[[SM]]#0 : tensor<?x4xf32>)
func.func @lse_read_early(%g: !gnn.graph, %q: tensor<?x4x16xf32>, %v: tensor<?x4x16xf32>) -> (tensor<?x4x16xf32>, tensor<?x4xf32>) {
  %s = gnn.sddmm dot %g, %q, %q : tensor<?x4x16xf32>, tensor<?x4x16xf32> -> tensor<?x4xf32>
  %alpha, %lse = gnn.edge_softmax %g, %s : tensor<?x4xf32>, tensor<?x4xf32>
  %e = linalg.generic {indexing_maps = [#n2, #n2], iterator_types = ["parallel", "parallel"]}
      ins(%lse : tensor<?x4xf32>) outs(%lse : tensor<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<?x4xf32>
  %agg = gnn.spmm sum %g, %v weights(%alpha : tensor<?x4xf32>) : tensor<?x4x16xf32> -> tensor<?x4x16xf32>
  return %agg, %e : tensor<?x4x16xf32>, tensor<?x4xf32>
}

// -----

// A softmax over the edges leaving each node does not normalise the rows the
// spmm aggregates: no attention group.

// CHECK-LABEL: func.func @reversed_softmax
// CHECK-NOT: attention
// CHECK: gnn.kernel_group "sddmm_0" family = edge_map
// CHECK: gnn.kernel_group "edge_softmax_0" family = edge_softmax
// CHECK: gnn.kernel_group "spmm_0" family = aggregation
func.func @reversed_softmax(%g: !gnn.graph, %q: tensor<?x4x16xf32>, %v: tensor<?x4x16xf32>) -> tensor<?x4x16xf32> {
  %s = gnn.sddmm dot %g, %q, %q : tensor<?x4x16xf32>, tensor<?x4x16xf32> -> tensor<?x4xf32>
  %alpha = gnn.edge_softmax %g, %s reversed : tensor<?x4xf32>
  %agg = gnn.spmm sum %g, %v weights(%alpha : tensor<?x4xf32>) : tensor<?x4x16xf32> -> tensor<?x4x16xf32>
  return %agg : tensor<?x4x16xf32>
}

// -----

// The spmm's features are computed between the softmax and the spmm: the
// attention group is placed at the spmm, after the group computing them.

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @features_in_between
// CHECK: %[[V:.*]] = gnn.kernel_group "elementwise_0" family = elementwise
// CHECK: gnn.kernel_group "attention_0" family = attention
// CHECK: gnn.edge_softmax
// CHECK-NEXT: gnn.spmm sum %{{.*}}, %[[V]] weights
func.func @features_in_between(%g: !gnn.graph, %q: tensor<?x4x16xf32>, %v: tensor<?x4x16xf32>) -> tensor<?x4x16xf32> {
  %s = gnn.sddmm dot %g, %q, %q : tensor<?x4x16xf32>, tensor<?x4x16xf32> -> tensor<?x4xf32>
  %alpha = gnn.edge_softmax %g, %s : tensor<?x4xf32>
  %v2 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v : tensor<?x4x16xf32>) outs(%v : tensor<?x4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<?x4x16xf32>
  %agg = gnn.spmm sum %g, %v2 weights(%alpha : tensor<?x4xf32>) : tensor<?x4x16xf32> -> tensor<?x4x16xf32>
  return %agg : tensor<?x4x16xf32>
}

// -----

// A size query on the scores sizes a value that is returned: the scores'
// shape is needed outside, so they stay in their own groups.

// CHECK-LABEL: func.func @score_size_escapes
// CHECK-NOT: attention
// CHECK: %[[S:.*]] = gnn.kernel_group "sddmm_0" family = edge_map
// CHECK: tensor.dim %[[S]]
func.func @score_size_escapes(%g: !gnn.graph, %q: tensor<?x4x16xf32>, %v: tensor<?x4x16xf32>) -> (tensor<?x4x16xf32>, index) {
  %c0 = arith.constant 0 : index
  %s = gnn.sddmm dot %g, %q, %q : tensor<?x4x16xf32>, tensor<?x4x16xf32> -> tensor<?x4xf32>
  %ne = tensor.dim %s, %c0 : tensor<?x4xf32>
  %alpha = gnn.edge_softmax %g, %s : tensor<?x4xf32>
  %agg = gnn.spmm sum %g, %v weights(%alpha : tensor<?x4xf32>) : tensor<?x4x16xf32> -> tensor<?x4x16xf32>
  return %agg, %ne : tensor<?x4x16xf32>, index
}

// -----

// An elementwise op on edge features passed in (no graph op produces them)
// is an edge DAG too: the reduce evaluates it per edge, reading the argument
// by edge.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @edge_argument
// CHECK: gnn.kernel_group "aggregation_0" family = aggregation
// CHECK-NEXT: %[[R:.*]] = linalg.generic
// CHECK: gnn.reduce sum %{{.*}}, %[[R]]
// CHECK-NEXT: gnn.yield
func.func @edge_argument(%g: !gnn.graph, %e: tensor<?x8xf32> {gnn.domain = "edge"}) -> tensor<?x8xf32> {
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%e : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %x = math.exp %a : f32
    linalg.yield %x : f32
  } -> tensor<?x8xf32>
  %s = gnn.reduce sum %g, %r : tensor<?x8xf32> -> tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}

// -----

// A node prologue (GCN): the degree, its rsqrt, the features scaled by it and
// the final combination run in the spmm's kernel. The matmul's result and the
// bias stay kernel inputs; `%empty`, also used outside, stays where it is.

#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @gcn_prologue
// CHECK: %[[H:.*]] = linalg.matmul
// CHECK-NEXT: %[[G:.*]] = gnn.kernel_group "aggregation_0" family = aggregation -> tensor<?x64xf32> {
// CHECK-NEXT: %[[D:.*]] = gnn.degree
// CHECK-NEXT: %[[I:.*]] = linalg.generic {{.*}} ins(%[[D]] : tensor<?xf32>) outs(%[[D]] : tensor<?xf32>)
// CHECK: math.rsqrt
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[H]], %[[I]] : tensor<?x64xf32>, tensor<?xf32>)
// CHECK: %[[A:.*]] = gnn.spmm sum %{{.*}}, %[[S]]
// CHECK-NEXT: %[[O:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[S]], %[[I]], %{{.*}} : {{.*}}) outs(%[[A]] : tensor<?x64xf32>)
// CHECK: gnn.yield %[[O]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[G]]
// NONE-LABEL: func.func @gcn_prologue
// NONE: gnn.kernel_group "degree_0" family = degree
// NONE: gnn.kernel_group "elementwise_0" family = elementwise
// NONE: gnn.kernel_group "spmm_0" family = aggregation
// ATT-LABEL: func.func @gcn_prologue
// ATT: gnn.kernel_group "degree_0" family = degree
// ATT: gnn.kernel_group "elementwise_0" family = elementwise
// ATT: gnn.kernel_group "spmm_0" family = aggregation
func.func @gcn_prologue(%g: !gnn.graph, %x: tensor<?x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %empty = tensor.empty(%n) : tensor<?x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x64xf32>) -> tensor<?x64xf32>
  %h = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %deg = gnn.degree %g : tensor<?xf32>
  %dempty = tensor.empty(%n) : tensor<?xf32>
  %dinv = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%deg : tensor<?xf32>) outs(%dempty : tensor<?xf32>) {
  ^bb0(%d: f32, %o: f32):
    %s = arith.addf %d, %one : f32
    %r = math.rsqrt %s : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %hs = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h, %dinv : tensor<?x64xf32>, tensor<?xf32>) outs(%empty : tensor<?x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<?x64xf32>
  %agg = gnn.spmm sum %g, %hs : tensor<?x64xf32> -> tensor<?x64xf32>
  %out = linalg.generic {indexing_maps = [#id2, #id2, #row, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%agg, %hs, %dinv, %b : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xf32>, tensor<64xf32>)
      outs(%empty : tensor<?x64xf32>) {
  ^bb0(%a: f32, %s: f32, %d: f32, %bias: f32, %o: f32):
    %t = arith.addf %a, %s : f32
    %u = arith.mulf %t, %d : f32
    %v = arith.addf %u, %bias : f32
    linalg.yield %v : f32
  } -> tensor<?x64xf32>
  return %out : tensor<?x64xf32>
}

// -----

// The normalisation is also returned: it must reach memory, so the prologue
// rule does not apply and the groups stay as without it.

#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @prologue_escapes
// CHECK-NOT: aggregation_0
// CHECK: %[[D:.*]] = gnn.kernel_group "degree_0" family = degree
// CHECK: %[[S:.*]] = gnn.kernel_group "elementwise_0" family = elementwise
// CHECK: gnn.kernel_group "spmm_0" family = aggregation
// CHECK-NEXT: gnn.spmm sum %{{.*}}, %[[S]]
// CHECK: return %{{.*}}, %[[D]]
func.func @prologue_escapes(%g: !gnn.graph, %h: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %n = tensor.dim %h, %c0 : tensor<?x64xf32>
  %deg = gnn.degree %g reversed : tensor<?xf32>
  %dempty = tensor.empty(%n) : tensor<?xf32>
  %dinv = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%deg : tensor<?xf32>) outs(%dempty : tensor<?xf32>) {
  ^bb0(%d: f32, %o: f32):
    %s = arith.addf %d, %one : f32
    %r = math.rsqrt %s : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %empty = tensor.empty(%n) : tensor<?x64xf32>
  %hs = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h, %dinv : tensor<?x64xf32>, tensor<?xf32>) outs(%empty : tensor<?x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<?x64xf32>
  %agg = gnn.spmm sum %g, %hs : tensor<?x64xf32> -> tensor<?x64xf32>
  return %agg, %dinv : tensor<?x64xf32>, tensor<?xf32>
}
