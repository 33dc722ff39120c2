// RUN: gnn-opt %s -split-input-file --gnn-pull-extremum-grads | FileCheck %s

// The bf16 max's gradient as autodiff writes it (f32 sums rounded to bf16
// once): a share per node stored as bf16 (exact for a single winner, a
// tie's dy / c rounded once), gathers of x at the sources and of the
// maximum and the share at the destinations, the terms (bf16, rounded only
// where stored) summed per source straight into bf16; the rounding generic
// and gnn.extremum_grad are gone.

#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @rounded
// CHECK-NOT: gnn.extremum_grad
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[DY:.*]], %[[W:.*]] : tensor<?x16xbf16>, tensor<?x16xf32>) outs(%{{.*}} : tensor<?x16xbf16>) attrs = {gnn.rounds_on_store} {
// CHECK: %[[D:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[NAMED:.*]] = arith.cmpf oge, %[[CODE:.*]], %{{.*}} : f32
// CHECK: %[[C:.*]] = arith.addf %[[CODE]], %{{.*}} : f32
// CHECK: %[[N:.*]] = arith.negf %[[D]] : f32
// CHECK: %[[P:.*]] = arith.divf %[[N]], %[[C]] : f32
// CHECK: %[[SH:.*]] = arith.select %[[NAMED]], %[[D]], %[[P]] : f32
// CHECK: arith.truncf %[[SH]] : f32 to bf16
// CHECK: %[[XE:.*]] = gnn.gather src %[[GR:.*]], %[[X:.*]] : tensor<?x16xbf16> -> tensor<?x16xbf16>
// CHECK: %[[YE:.*]] = gnn.gather dst %[[GR]], %[[Y:.*]] : tensor<?x16xbf16> -> tensor<?x16xbf16>
// CHECK: %[[GE:.*]] = gnn.gather dst %[[GR]], %[[G]] : tensor<?x16xbf16> -> tensor<?x16xbf16>
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[XE]], %[[YE]], %[[GE]] : tensor<?x16xbf16>, tensor<?x16xbf16>, tensor<?x16xbf16>) outs(%{{.*}} : tensor<?x16xbf16>) attrs = {gnn.rounds_on_store}
// CHECK: %[[EQ:.*]] = arith.cmpf ueq
// CHECK: %[[S:.*]] = arith.select %[[EQ]], %{{.*}}, %{{.*}} : f32
// CHECK: arith.truncf %[[S]] : f32 to bf16
// CHECK: %[[R:.*]] = gnn.reduce sum %[[GR]], %[[T]] reversed : tensor<?x16xbf16> -> tensor<?x16xbf16>
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @rounded(%g: !gnn.graph, %x: tensor<?x16xbf16>, %y: tensor<?x16xbf16>, %w: tensor<?x16xf32>, %dy: tensor<?x16xbf16>) -> tensor<?x16xbf16> {
  %s = gnn.extremum_grad %g, %x, %y, %w, %dy : tensor<?x16xbf16>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %s, %c0 : tensor<?x16xf32>
  %e = tensor.empty(%n) : tensor<?x16xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<?x16xf32>) outs(%e : tensor<?x16xbf16>) attrs = {gnn.rounds_on_store} {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<?x16xbf16>
  return %r : tensor<?x16xbf16>
}

// -----

// Sums read as they are (no rounding user): the terms and the reduce are
// f32. Reversed (the aggregation at the sources): the gradient is pulled to
// the destinations, the maximum and the shares gathered at the sources.

// CHECK-LABEL: func.func @f32_sums
// CHECK: %[[G:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x8xf16>)
// CHECK: %[[XE:.*]] = gnn.gather dst %[[GR:.*]], %{{.*}} : tensor<?x8xf16> -> tensor<?x8xf16>
// CHECK: %[[YE:.*]] = gnn.gather src %[[GR]], %{{.*}} : tensor<?x8xf16> -> tensor<?x8xf16>
// CHECK: %[[GE:.*]] = gnn.gather src %[[GR]], %[[G]] : tensor<?x8xf16> -> tensor<?x8xf16>
// CHECK: %[[T:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x8xf32>) {
// CHECK: %[[R:.*]] = gnn.reduce sum %[[GR]], %[[T]] : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK: return %[[R]], %[[R]]
func.func @f32_sums(%g: !gnn.graph, %x: tensor<?x8xf16>, %y: tensor<?x8xf16>, %w: tensor<?x8xf32>, %dy: tensor<?x8xf16>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %s = gnn.extremum_grad %g, %x, %y, %w, %dy reversed : tensor<?x8xf16>
  return %s, %s : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// f32 and f64 rows keep the routing kernel (their ties are rare).

// CHECK-LABEL: func.func @routed
// CHECK: gnn.extremum_grad
// CHECK-NOT: gnn.reduce
func.func @routed(%g: !gnn.graph, %x: tensor<?x8xf32>, %y: tensor<?x8xf32>, %w: tensor<?x8xf32>, %dy: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %s = gnn.extremum_grad %g, %x, %y, %w, %dy : tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}
