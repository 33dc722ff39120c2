// RUN: gnn-opt %s --gnn-autodiff -split-input-file | FileCheck %s
// RUN: gnn-opt %s --gnn-autodiff -split-input-file | gnn-opt -split-input-file --verify-diagnostics > /dev/null

// A select with one branch a constant (torch.relu as gnnc.nn writes it):
// the backward keeps the select outside the product with dy, so that the
// masked branch's gradient is exactly 0 whatever dy is (NaN included), as
// PyTorch's relu backward gives, and not dy * 0. Each element of x's
// gradient is one iteration's term: the select is yielded as it is, no zeros
// read (`0 + s` would make a -0 gradient +0), its init an empty tensor.
// The mask is read from x: a function argument is kept for nothing (a ReLU
// of a value an op made reads its result instead:
// autodiff-relu-mask.mlir).
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @relu_bwd(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x8xf32>, %[[DY:[^:]*]]: tensor<?x8xf32>
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[DY]] : {{.*}} outs(%{{.*}} : tensor<?x8xf32>)
// CHECK-NEXT: ^bb0(%[[XS:[^:]*]]: f32, %[[DYS:[^:]*]]: f32, %{{[^:]*}}: f32):
// CHECK: %[[C:.*]] = arith.cmpf ole, %[[XS]]
// CHECK: %[[P:.*]] = arith.mulf %[[DYS]], %{{.*}} : f32
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[S:.*]] = arith.select %[[C]], %[[Z]], %[[P]] : f32
// CHECK-NEXT: linalg.yield %[[S]]
func.func @relu(%x: tensor<?x8xf32> {gnn.differentiable}) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %le = arith.cmpf ole, %a, %z : f32
    %r = arith.select %le, %z, %a : f32
    linalg.yield %r : f32
  } -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// torch.where(c, x * w, 0) followed by a product and a tanh: the select
// stays outermost through the chain of products (the taken branch's term is
// dy * ((w * v) * (1 - t^2)), the product as before), and w's gradient, a
// sum over the rows, sums those selects (into zeros: an accumulator).
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @where_chain_bwd(
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%{{[^:]*}}: f32, %{{[^:]*}}: f32, %{{[^:]*}}: f32, %[[DY:[^:]*]]: f32, %{{[^:]*}}: f32):
// CHECK: %[[C:.*]] = arith.cmpf ogt
// CHECK: math.tanh
// CHECK: %[[P:.*]] = arith.mulf %[[DY]], %{{.*}} : f32
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[S:.*]] = arith.select %[[C]], %[[P]], %[[Z]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%{{[^:]*}}: f32, %{{[^:]*}}: f32, %{{[^:]*}}: f32, %[[DY2:[^:]*]]: f32, %[[ACC2:[^:]*]]: f32):
// CHECK: %[[C2:.*]] = arith.cmpf ogt
// CHECK: math.tanh
// CHECK: %[[P2:.*]] = arith.mulf %[[DY2]], %{{.*}} : f32
// CHECK-NEXT: %[[Z2:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[S2:.*]] = arith.select %[[C2]], %[[P2]], %[[Z2]] : f32
// CHECK-NEXT: arith.addf %[[ACC2]], %[[S2]] : f32
func.func @where_chain(%x: tensor<?x8xf32> {gnn.differentiable}, %w: tensor<8xf32> {gnn.differentiable}, %v: tensor<8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %y = linalg.generic {indexing_maps = [#id2, #col, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %w, %v : tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %gt = arith.cmpf ogt, %a, %z : f32
    %m = arith.mulf %a, %b : f32
    %s = arith.select %gt, %m, %z : f32
    %p = arith.mulf %s, %c : f32
    %t = math.tanh %p : f32
    linalg.yield %t : f32
  } -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// Two selects of different conditions on one value (torch.where(x > 0, x,
// 0) + torch.where(x > 1, x, 0)): the tangent is kept as its two masked
// terms, each multiplied by dy inside its own select, so where neither takes
// x the gradient is 0 + 0 whatever dy is (PyTorch adds each where's
// gradient), not dy * (0 + 0).
#id4 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @two_wheres_bwd(
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[XS:[^:]*]]: f32, %[[DYS:[^:]*]]: f32, %{{[^:]*}}: f32):
// CHECK-DAG: %[[C0:.*]] = arith.cmpf ogt, %[[XS]], %[[Z0:[^ ]*]] : f32
// CHECK-DAG: %[[C1:.*]] = arith.cmpf ogt, %[[XS]], %[[ONE:[^ ]*]] : f32
// CHECK: %[[P0:.*]] = arith.mulf %[[DYS]], %{{.*}} : f32
// CHECK: %[[S0:.*]] = arith.select %[[C0]], %[[P0]], %{{.*}} : f32
// CHECK: %[[P1:.*]] = arith.mulf %[[DYS]], %{{.*}} : f32
// CHECK: %[[S1:.*]] = arith.select %[[C1]], %[[P1]], %{{.*}} : f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[S0]], %[[S1]] : f32
// CHECK-NEXT: linalg.yield %[[R]]
func.func @two_wheres(%x: tensor<?x8xf32> {gnn.differentiable}) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %gt = arith.cmpf ogt, %a, %z : f32
    %gt1 = arith.cmpf ogt, %a, %one : f32
    %s1 = arith.select %gt, %a, %z : f32
    %s2 = arith.select %gt1, %a, %z : f32
    %r = arith.addf %s1, %s2 : f32
    linalg.yield %r : f32
  } -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
