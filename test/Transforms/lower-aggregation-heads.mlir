// RUN: gnn-opt %s --gnn-cuda-pipeline='stats=mean-degree:13' -split-input-file | FileCheck %s

// Per-head values in a fused aggregation (lanes = 32, vector = 4: a lane
// covers 4 features of one head, a head 8 lanes). The score sums over the
// 32 features of its head: each lane sums its own 4 terms and a team
// reduction over the head's 8 lanes adds them (no 32-step loop), and
// exp(score), read by each of the lane's 4 features through a broadcast, is
// computed once per edge.

#h3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#att = affine_map<(d0, d1, d2) -> (d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>
#h2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @score_scales_features(%g: !gnn.graph, %xl: tensor<?x4x32xf32>, %xr: tensor<?x4x32xf32>, %att: tensor<4x32xf32>) -> tensor<?x4x32xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %e = gnn.sddmm add %g, %xr, %xl : tensor<?x4x32xf32>, tensor<?x4x32xf32> -> tensor<?x4x32xf32>
  %ne = tensor.dim %e, %c0 : tensor<?x4x32xf32>
  %sempty = tensor.empty(%ne) : tensor<?x4xf32>
  %szero = linalg.fill ins(%zero : f32) outs(%sempty : tensor<?x4xf32>) -> tensor<?x4xf32>
  %score = linalg.generic {indexing_maps = [#h3, #att, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e, %att : tensor<?x4x32xf32>, tensor<4x32xf32>) outs(%szero : tensor<?x4xf32>) {
  ^bb0(%v: f32, %a: f32, %o: f32):
    %m = arith.mulf %v, %a : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  %w = linalg.generic {indexing_maps = [#h2, #h2], iterator_types = ["parallel", "parallel"]}
      ins(%score : tensor<?x4xf32>) outs(%sempty : tensor<?x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %x = math.exp %v : f32
    linalg.yield %x : f32
  } -> tensor<?x4xf32>
  %fempty = tensor.empty(%ne) : tensor<?x4x32xf32>
  %m = linalg.generic {indexing_maps = [#h3, #red, #h3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %w : tensor<?x4x32xf32>, tensor<?x4xf32>) outs(%fempty : tensor<?x4x32xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %x = arith.mulf %v, %s : f32
    linalg.yield %x : f32
  } -> tensor<?x4x32xf32>
  %r = gnn.reduce sum %g, %m : tensor<?x4x32xf32> -> tensor<?x4x32xf32>
  return %r : tensor<?x4x32xf32>
}
// CHECK-LABEL: gnnk.kernel @aggregation_0
// CHECK-NOT: scf.for
// CHECK: gnnk.for_edges
// CHECK-NOT: scf.for
// CHECK: gnnk.team_reduce %{{.*}} stride 1 width 8 : f32
// CHECK-NOT: scf.for
// CHECK: math.exp
// CHECK-NOT: math.exp
// CHECK-NOT: scf.for
// CHECK-LABEL: func.func @score_scales_features

// -----

// GT's backward weights: an sddmm dot over a head's 32 features, shared by
// the head's lanes (a vector load of each operand, 4 fmas, a team
// reduction), then scaled per head. The row's own operand is the same on
// every edge: read before the edge loop.

#e2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @dot_weights(%g: !gnn.graph, %q: tensor<?x4x32xf32>, %k: tensor<?x4x32xf32>, %v: tensor<?x4x32xf32>) -> tensor<?x4x32xf32> {
  %c0 = arith.constant 0 : index
  %scale = arith.constant 0.17677669 : f32
  %raw = gnn.sddmm dot %g, %k, %q reversed : tensor<?x4x32xf32>, tensor<?x4x32xf32> -> tensor<?x4xf32>
  %ne = tensor.dim %raw, %c0 : tensor<?x4xf32>
  %se = tensor.empty(%ne) : tensor<?x4xf32>
  %w = linalg.generic {indexing_maps = [#e2, #e2], iterator_types = ["parallel", "parallel"]}
      ins(%raw : tensor<?x4xf32>) outs(%se : tensor<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %scale : f32
    linalg.yield %m : f32
  } -> tensor<?x4xf32>
  %agg = gnn.spmm sum %g, %v weights(%w : tensor<?x4xf32>) reversed : tensor<?x4x32xf32> -> tensor<?x4x32xf32>
  return %agg : tensor<?x4x32xf32>
}
// CHECK-LABEL: gnnk.kernel @aggregation_0
// CHECK: gnnk.load %{{.*}} : memref<?xf32> -> f32, f32, f32, f32
// CHECK: gnnk.for_edges
// CHECK-NOT: scf.for
// CHECK: gnnk.load %{{.*}} : memref<?xf32> -> f32, f32, f32, f32
// CHECK-COUNT-4: math.fma
// CHECK: gnnk.team_reduce %{{.*}} stride 1 width 8 : f32
// CHECK: arith.mulf
// CHECK-NOT: scf.for
// CHECK-LABEL: func.func @dot_weights

// -----

// A per-head maximum is not a sum: each lane computes its head's whole
// reduction, once per edge (not once per feature it covers).

#h3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @head_max(%g: !gnn.graph, %x: tensor<?x4x32xf32>) -> tensor<?x4x32xf32> {
  %c0 = arith.constant 0 : index
  %ninf = arith.constant 0xFF800000 : f32
  %e = gnn.gather src %g, %x : tensor<?x4x32xf32> -> tensor<?x4x32xf32>
  %ne = tensor.dim %e, %c0 : tensor<?x4x32xf32>
  %sempty = tensor.empty(%ne) : tensor<?x4xf32>
  %sfill = linalg.fill ins(%ninf : f32) outs(%sempty : tensor<?x4xf32>) -> tensor<?x4xf32>
  %mx = linalg.generic {indexing_maps = [#h3, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e : tensor<?x4x32xf32>) outs(%sfill : tensor<?x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.maximumf %o, %v : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  %fempty = tensor.empty(%ne) : tensor<?x4x32xf32>
  %m = linalg.generic {indexing_maps = [#h3, #red, #h3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %mx : tensor<?x4x32xf32>, tensor<?x4xf32>) outs(%fempty : tensor<?x4x32xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %d = arith.subf %v, %s : f32
    linalg.yield %d : f32
  } -> tensor<?x4x32xf32>
  %r = gnn.reduce sum %g, %m : tensor<?x4x32xf32> -> tensor<?x4x32xf32>
  return %r : tensor<?x4x32xf32>
}
// CHECK-LABEL: gnnk.kernel @aggregation_0
// CHECK: gnnk.for_edges
// CHECK: scf.for
// CHECK: arith.maximumf
// CHECK-NOT: scf.for
// CHECK-NOT: arith.maximumf
// CHECK-LABEL: func.func @head_max
