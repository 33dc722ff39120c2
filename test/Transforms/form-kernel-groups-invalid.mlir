// RUN: gnn-opt %s --allow-unregistered-dialect --gnn-form-kernel-groups -split-input-file -verify-diagnostics

// The planner takes the ops of a block in order, each reading only ops before
// it. A graph region (here a nested module) need not order them: its block
// is rejected, on the op that holds it.

func.func @graph_region() {
  // expected-error @+1 {{cannot plan the kernel groups of this block: op 0 reads op 2, which does not come before it}}
  builtin.module {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    %g = "test.graph"() : () -> !gnn.graph
    %x = gnn.spmm sum %g, %s : tensor<?x8xf32> -> tensor<?x8xf32>
  }
  return
}

// -----

// A structured op reading a node tensor and an edge tensor along its leading
// loop has no row count a graph gives: a kernel over either count would read
// the other tensor out of bounds. Refused where it reads them, even though
// no graph op reads its result.

#m = affine_map<(d0, d1) -> (d0, d1)>
// expected-note @+1 {{operand 1 is a node tensor}}
func.func @node_plus_edge(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-note @+1 {{operand 0 is an edge tensor}}
  %e = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  %c0 = arith.constant 0 : index
  %ne = tensor.dim %e, %c0 : tensor<?x8xf32>
  // expected-note @+1 {{operand 2 is an edge tensor}}
  %0 = tensor.empty(%ne) : tensor<?x8xf32>
  // expected-error @+1 {{reads tensors of two index sets along its leading loop}}
  %r = linalg.generic {indexing_maps = [#m, #m, #m], iterator_types = ["parallel", "parallel"]} ins(%e, %x : tensor<?x8xf32>, tensor<?x8xf32>) outs(%0 : tensor<?x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// -----

// The two sides of a bipartite graph, and an edge tensor times a weight into
// a node-sized result.

#m = affine_map<(d0, d1) -> (d0, d1)>
// expected-note @+2 {{operand 0 is a src tensor}}
// expected-note @+1 {{operand 1 is a dst tensor}}
func.func @src_plus_dst(%g: !gnn.graph<bipartite>, %x: tensor<?x4xf32> {gnn.domain = "src"}, %xd: tensor<?x4xf32> {gnn.domain = "dst"}) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %xd, %c0 : tensor<?x4xf32>
  // expected-note @+1 {{operand 2 is a dst tensor}}
  %0 = tensor.empty(%n) : tensor<?x4xf32>
  // expected-error @+1 {{reads tensors of two index sets along its leading loop}}
  %r = linalg.generic {indexing_maps = [#m, #m, #m], iterator_types = ["parallel", "parallel"]} ins(%x, %xd : tensor<?x4xf32>, tensor<?x4xf32>) outs(%0 : tensor<?x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

func.func @edge_matmul(%g: !gnn.graph, %x: tensor<?x8xf32>, %w: tensor<8x4xf32>) -> tensor<?x4xf32> {
  // expected-note @+1 {{operand 0 is an edge tensor}}
  %e = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %z = arith.constant 0.0 : f32
  %0 = tensor.empty(%n) : tensor<?x4xf32>
  // expected-note @+1 {{operand 2 is a node tensor}}
  %f = linalg.fill ins(%z : f32) outs(%0 : tensor<?x4xf32>) -> tensor<?x4xf32>
  // expected-error @+1 {{reads tensors of two index sets along its leading loop}}
  %m = linalg.matmul ins(%e, %w : tensor<?x8xf32>, tensor<8x4xf32>) outs(%f : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %m : tensor<?x4xf32>
}

// -----

// Two node tensors of different static row counts: no graph has both.

// expected-note @+2 {{the other tensor}}
// expected-error @+1 {{a node tensor of 7 rows, where another one has 5: no graph has both counts}}
func.func @two_node_counts(%g: !gnn.graph, %x: tensor<5x8xf32> {gnn.domain = "node"}, %y: tensor<7x8xf32> {gnn.domain = "node"}) -> (tensor<5x8xf32>, tensor<7x8xf32>) {
  %0 = gnn.spmm sum %g, %x : tensor<5x8xf32> -> tensor<5x8xf32>
  return %0, %y : tensor<5x8xf32>, tensor<7x8xf32>
}
