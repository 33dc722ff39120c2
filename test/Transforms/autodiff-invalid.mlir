// RUN: gnn-opt %s --gnn-autodiff -split-input-file -verify-diagnostics


#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @no_rule(%x: tensor<4x3xf32> {gnn.differentiable}) -> tensor<3x4xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  // expected-error @+1 {{'linalg.transpose' op has no derivative rule (VJPOpInterface) and lies between a differentiable argument and a result of @no_rule}}
  %t = linalg.transpose ins(%x : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>) permutation = [1, 0]
  return %t : tensor<3x4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @max_reduction(%x: tensor<4x3xf32> {gnn.differentiable}, %init: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.generic' op has no derivative rule: result 0 of a reduction must be yielded as `out + term` (a sum)}}
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x3xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %o : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
func.func @body_op_without_rule(%x: tensor<4xf32> {gnn.differentiable}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    // expected-error @+1 {{'math.atan' op has no derivative rule (in the body of a linalg op on the path to a differentiable argument)}}
    %r = math.atan %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

#map = affine_map<(d0, d1) -> (d1, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @diagonal(%x: tensor<3x3xf32> {gnn.differentiable}) -> tensor<3x3xf32> {
  %e = tensor.empty() : tensor<3x3xf32>
  // expected-error @+1 {{'linalg.generic' op has no derivative rule for operand 0: its indexing map affine_map<(d0, d1) -> (d1, d1)> reads a loop twice}}
  %y = linalg.generic {indexing_maps = [#map, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<3x3xf32>
  return %y : tensor<3x3xf32>
}

// -----

// expected-error @+1 {{expects `gnn.differentiable` to be a unit attribute on a float tensor argument (argument #0)}}
func.func @not_float(%g: !gnn.graph {gnn.differentiable}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op cannot be differentiated: @taken_fwd exists already}}
func.func @taken(%x: tensor<4xf32> {gnn.differentiable}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @taken_fwd() {
  return
}

// -----

// expected-error @+1 {{'func.func' op cannot be differentiated: it has no body}}
func.func private @declared(%x: tensor<4xf32> {gnn.differentiable}) -> tensor<4xf32>

// -----

#shift = affine_map<(d0) -> (d0 + 1)>
#id1 = affine_map<(d0) -> (d0)>
func.func @shifted(%x: tensor<5xf32> {gnn.differentiable}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{'linalg.generic' op has no derivative rule for operand 0: its indexing map affine_map<(d0) -> (d0 + 1)> is not made of loops (and constant 0s of size-1 dimensions)}}
  %y = linalg.generic {indexing_maps = [#shift, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<5xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Aᵀ B in a forward function: only C += A B and C += A Bᵀ have a rule.
func.func @matmul_transposed_lhs(%g: !gnn.graph, %x: tensor<?x16xf32> {gnn.differentiable}, %y: tensor<?x8xf32>) -> tensor<16x8xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x8xf32>) -> tensor<16x8xf32>
  // expected-error @+1 {{'linalg.matmul' op has no derivative rule: expects C += A B or C += A Bᵀ on tensors}}
  %h = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%x, %y : tensor<?x16xf32>, tensor<?x8xf32>) outs(%f : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %h : tensor<16x8xf32>
}
