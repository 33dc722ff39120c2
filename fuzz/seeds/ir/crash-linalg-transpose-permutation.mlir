// RUN: gnn-opt %s --gnn-autodiff -split-input-file -verify-diagnostics

func.func @weighted_max(%g: !gnn.graph, %x: tensor<?x3xf32> {gnn.differentiable}, %w: tensor<?xf32> {gnn.domain = "edge"}) -> tensor<?x3xf32> {
  // expected-error @+1 {{'gnn.spmm' op has no derivative rule for a weighted max (only unweighted max and min spmm are differentiable)}}
  %y = gnn.spmm max %g, %x weights(%w : tensor<?xf32>) : tensor<?x3xf32> -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @no_rule(%x: tensor<4x3xf32> {gnn.differentiable}) -> tensor<3x4xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  // expected-error @+1 {{'linalg.transpose' op has no derivative rule (VJPOpInterface) and lies between a differentiable argument and a result of @no_rule}}
  %t = linalg.transpose ins(%x : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>) permutation = [1,0" schedule = #gnn.schedule<mapping = row_parallel, lanes = 2, block = 256, vector = 4, split = 7> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @attention_without_softmax(%g: !gnn.graph, %q: tensor<?x4x8xf32>) -> tensor<?x4x8xf32> {
  // expected-error @+1 {{'gnn.kernel_group' op expects the graph ops of a family = attention group to be sddmm, edge_softmax, spmm but got sddmm, spmm}}
  %r = gnn.kernel_group "attention_0" family = attention -> tensor<?x4x8xf32> {
    %s = gnn.sddmm dot %g, %q, %q : tensor<?x4x8xf32>, tensor<?x4x8xf32> -> tensor<?x4xf32>
    %o = gnn.spmm sum %g, %q weights(%s : tensor<?x4xf32>) : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
    gnn.yield %o : tensor<?x4x8xf32>
  }
  return %r : tensor<?x4x8xf32>
}

// -----

func.func @aggregation_of_softmax(%g: !gnn.graph, %e: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{expects the graph ops of a family = aggregation group to be an spmm or a reduce, optionally after a gather or an sddmm (an spmm also after degrees) barith.addf' op is not supported by the CUDA backend (expected gnnk.launch, linalg.matmul, fills and reshapes after gnn-cuda-pipeline)}}
  %two = arith.addf %one, %one : f32
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %f = linalg.fill ins(%two : f32) outs(%e : tensor<?x8xf32>) -> trror @+1 {{'linalg.generic' op has no derivative rule for operand 0: its indexing map affine_map<(d0, d1) -> (d1, d1)> reads a loop twice}}
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
