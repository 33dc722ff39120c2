// RUN: gnn-opt %s --gnn-autodiff -split-input-file | FileCheck %s
// RUN: gnn-opt %s --gnn-autodiff -split-input-file | gnn-opt -split-input-file > /dev/null
// RUN: gnn-run %s --graph=powerlaw:nodes=5,edges=12 --grad --function=arg | FileCheck %s --check-prefix=GRAD

// A node tensor with a static leading size cannot be told from an edge
// tensor by its type: the backward's arguments say which it is (as edge
// tensors already did), or its graph ops do not verify.
// CHECK-LABEL: func.func @arg_bwd(%arg0: !gnn.graph, %arg1: tensor<5x8xf32> {gnn.domain = "node"}) -> tensor<5x8xf32>
// CHECK-NEXT: gnn.spmm sum %arg0, %arg1 reversed : tensor<5x8xf32> -> tensor<5x8xf32>
// GRAD: "gradients": [
// GRAD: "shape": [
// GRAD-NEXT: 5,
// GRAD-NEXT: 8
func.func @arg(%g: !gnn.graph, %x: tensor<5x8xf32> {gnn.domain = "node", gnn.differentiable}) -> tensor<5x8xf32> {
  %y = gnn.spmm sum %g, %x : tensor<5x8xf32> -> tensor<5x8xf32>
  return %y : tensor<5x8xf32>
}

// -----

// Only the result is static: its gradient is a node tensor.
// CHECK-LABEL: func.func @result_bwd(%arg0: !gnn.graph, %arg1: tensor<5x8xf32> {gnn.domain = "node"}) -> tensor<?x8xf32>
func.func @result(%g: !gnn.graph, %x: tensor<?x8xf32> {gnn.differentiable}) -> tensor<5x8xf32> {
  %y = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<5x8xf32>
  return %y : tensor<5x8xf32>
}

// -----

// The sides of a bipartite graph, static.
// CHECK-LABEL: func.func @sides_bwd(%arg0: !gnn.graph<bipartite>, %arg1: tensor<4x8xf32> {gnn.domain = "dst"}
// CHECK-SAME: tensor<6x8xf32> {gnn.domain = "src"}
// CHECK-SAME: -> (tensor<6x8xf32>, tensor<4x8xf32>)
func.func @sides(%g: !gnn.graph<bipartite>, %x: tensor<6x8xf32> {gnn.domain = "src", gnn.differentiable}, %h: tensor<4x8xf32> {gnn.domain = "dst", gnn.differentiable}) -> tensor<4x8xf32> {
  %s = gnn.sddmm add %g, %x, %h : !gnn.graph<bipartite>, tensor<6x8xf32>, tensor<4x8xf32> -> tensor<?x8xf32>
  %r = gnn.reduce max %g, %s : !gnn.graph<bipartite>, tensor<?x8xf32> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// A static size the backward reads at its top level (the node count of the
// attention scores' zero init, 7) is a constant @f_bwd makes itself: it was
// left in the forward, an unlinked operand that crashed the pass.
// CHECK-LABEL: func.func @attention_bwd(
// CHECK: %[[C7:.*]] = arith.constant 7 : index
// CHECK: tensor.empty(%[[C7]]) : tensor<?xf32>
func.func @attention(%g: !gnn.graph, %x: tensor<7x8xf32> {gnn.domain = "node", gnn.differentiable}) -> tensor<7x8xf32> {
  %s = gnn.sddmm dot %g, %x, %x : tensor<7x8xf32>, tensor<7x8xf32> -> tensor<?xf32>
  %w = gnn.edge_softmax %g, %s : tensor<?xf32>
  %o = gnn.spmm sum %g, %x weights(%w : tensor<?xf32>) : tensor<7x8xf32> -> tensor<7x8xf32>
  return %o : tensor<7x8xf32>
}
