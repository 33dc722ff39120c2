// RUN: gnn-opt %s --gnn-autodiff -split-input-file | FileCheck %s

// torch.relu between two Linears (an MLP, GIN's and GINE's `nn`): the
// relu's backward reads its result, which the second Linear's weight
// gradient keeps anyway, so the pre-activation h0 is not a residual. The
// forward returns the result, then x (the first weight's gradient), the
// weights (the inputs' gradients) and y0: no [N, 16] intermediate but y0.
#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @mlp_fwd(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x16xf32> {gnn.differentiable}, %[[W0:[^:]*]]: tensor<16x16xf32> {gnn.differentiable}, %[[W1:[^:]*]]: tensor<16x16xf32> {gnn.differentiable})
// CHECK-SAME: -> (tensor<?x16xf32>, tensor<?x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<?x16xf32>)
// CHECK: %[[H0:.*]] = linalg.matmul
// CHECK: %[[Y0:.*]] = linalg.generic {{.*}} ins(%[[H0]] :
// CHECK: %[[H1:.*]] = linalg.matmul {{.*}} ins(%[[Y0]], %[[W1]] :
// CHECK: return %[[H1]], %[[X]], %[[W0]], %[[W1]], %[[Y0]] :
// CHECK-LABEL: func.func @mlp_bwd(
// CHECK: arith.cmpf ole
func.func @mlp(%x: tensor<?x16xf32> {gnn.differentiable}, %w0: tensor<16x16xf32> {gnn.differentiable},
               %w1: tensor<16x16xf32> {gnn.differentiable}) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %e0 = tensor.empty(%n) : tensor<?x16xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<?x16xf32>) -> tensor<?x16xf32>
  %h0 = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%x, %w0 : tensor<?x16xf32>, tensor<16x16xf32>)
      outs(%z0 : tensor<?x16xf32>) -> tensor<?x16xf32>
  %e1 = tensor.empty(%n) : tensor<?x16xf32>
  %y0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h0 : tensor<?x16xf32>) outs(%e1 : tensor<?x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %le = arith.cmpf ole, %v, %zero : f32
    %r = arith.select %le, %zero, %v : f32
    linalg.yield %r : f32
  } -> tensor<?x16xf32>
  %e2 = tensor.empty(%n) : tensor<?x16xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x16xf32>) -> tensor<?x16xf32>
  %h1 = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%y0, %w1 : tensor<?x16xf32>, tensor<16x16xf32>)
      outs(%z2 : tensor<?x16xf32>) -> tensor<?x16xf32>
  return %h1 : tensor<?x16xf32>
}

// -----

// A ReLU of a function argument reads the argument (kept for nothing: the
// caller holds it), not its result, which the forward would then have to
// keep (here the result is not returned, only aggregated).
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @argument_fwd(
// CHECK-SAME: -> (tensor<?x8xf32>, tensor<?x8xf32>)
// CHECK: return %{{.*}}, %arg1 :
// CHECK-LABEL: func.func @argument_bwd(
// CHECK: arith.cmpf ole
func.func @argument(%g: !gnn.graph, %x: tensor<?x8xf32> {gnn.differentiable}) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %le = arith.cmpf ole, %v, %zero : f32
    %r = arith.select %le, %zero, %v : f32
    linalg.yield %r : f32
  } -> tensor<?x8xf32>
  %s = gnn.spmm sum %g, %y : tensor<?x8xf32> -> tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}

// -----

// Masks the result cannot stand for, read from the input as before (h, an
// op's value): `h < 0` (y is 0 where h is 0, and h's gradient passes there)
// and a relu that rounds (bf16 stored from f32: a positive h can round to
// 0). The forward keeps h (and x, for h = x * x), not y.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @below_zero_fwd(
// CHECK: %[[H:.*]] = linalg.generic
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[H]] :
// CHECK: return %[[Y]], %arg0, %[[H]] :
// CHECK-LABEL: func.func @below_zero_bwd(
// CHECK-SAME: %{{[^:]*}}: tensor<?x8xf32>, %[[HR:[^:]*]]: tensor<?x8xf32>, %[[DY:[^:]*]]: tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK: linalg.generic {{.*}} ins(%[[HR]], %[[DY]] :
// CHECK: arith.cmpf olt
func.func @below_zero(%x: tensor<?x8xf32> {gnn.differentiable}) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e0 = tensor.empty(%n) : tensor<?x8xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x8xf32>) outs(%e0 : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = arith.mulf %v, %v : f32
    linalg.yield %t : f32
  } -> tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %lt = arith.cmpf olt, %v, %zero : f32
    %r = arith.select %lt, %zero, %v : f32
    linalg.yield %r : f32
  } -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// CHECK-LABEL: func.func @rounded_fwd(
// CHECK: %[[H:.*]] = linalg.generic
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[H]] :
// CHECK: return %[[Y]], %arg0, %[[H]] :
// CHECK-LABEL: func.func @rounded_bwd(
// CHECK-SAME: %{{[^:]*}}: tensor<?x8xf32>, %[[HR:[^:]*]]: tensor<?x8xf32>, %[[DY:[^:]*]]: tensor<?x8xbf16>) -> tensor<?x8xf32>
// CHECK: linalg.generic {{.*}} ins(%[[HR]], %[[DY]] :
// CHECK: arith.cmpf ole
func.func @rounded(%x: tensor<?x8xf32> {gnn.differentiable}) -> tensor<?x8xbf16> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e0 = tensor.empty(%n) : tensor<?x8xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x8xf32>) outs(%e0 : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = arith.mulf %v, %v : f32
    linalg.yield %t : f32
  } -> tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xbf16>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<?x8xf32>) outs(%e : tensor<?x8xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %le = arith.cmpf ole, %v, %zero : f32
    %r = arith.select %le, %zero, %v : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<?x8xbf16>
  return %y : tensor<?x8xbf16>
}
