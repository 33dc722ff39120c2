// The graph_block rule of gnn-form-kernel-groups: with statistics of a batch
// of small graphs (largest 9 nodes: blocks of 16), a function made only of
// degrees, spmm sums and means, matmuls by weight arguments and elementwise
// node ops becomes one group; anything else keeps the per-op groups.
// RUN: gnn-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(gnn-form-kernel-groups))' | FileCheck %s
// RUN: gnn-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(gnn-form-kernel-groups{fuse=attention,aggregation}))' | FileCheck %s --check-prefix=NORULE
// RUN: gnn-opt %s --split-input-file --gnn-codegen-pipeline | FileCheck %s --check-prefix=SCHED

#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
module attributes {gnn.graph_stats = #gnn.graph_stats<nodes = 36000, edges = 75000, max_in = 4, max_out = 4, p50 = 2, p90 = 3, p99 = 4, p999 = 4, rows_by_degree = [], edges_by_degree = [], isolated = 0, self_loops = 0, directed = false, graphs = 4096, smallest_graph = 3, largest_graph = 9, csr_order = false>} {
  // CHECK-LABEL: func.func @two_layers
  // CHECK: %[[G:.*]] = gnn.kernel_group "graph_block_0" family = graph_block -> tensor<?x8xf32> attributes {gnn.max_graph_nodes = 16 : i64}
  // CHECK: linalg.matmul
  // CHECK: gnn.spmm mean
  // CHECK: linalg.matmul
  // CHECK: gnn.spmm sum
  // CHECK: gnn.yield
  // CHECK-NEXT: }
  // CHECK-NEXT: return %[[G]]
  // NORULE-LABEL: func.func @two_layers
  // NORULE-NOT: graph_block
  // NORULE: family = aggregation
  // SCHED-LABEL: func.func @two_layers
  // SCHED: family = graph_block schedule = <mapping = block_per_graph, lanes = 32, block = 128, vector = 1, split = 0>
  func.func @two_layers(%g: !gnn.graph, %x: tensor<?x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x8xf32>) -> tensor<?x8xf32> {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %n = tensor.dim %x, %c0 : tensor<?x16xf32>
    %e1 = tensor.empty(%n) : tensor<?x32xf32>
    %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x32xf32>) -> tensor<?x32xf32>
    %h1 = linalg.matmul ins(%x, %w1 : tensor<?x16xf32>, tensor<16x32xf32>) outs(%z1 : tensor<?x32xf32>) -> tensor<?x32xf32>
    %a1 = gnn.spmm mean %g, %h1 : tensor<?x32xf32> -> tensor<?x32xf32>
    %r1 = linalg.generic {indexing_maps = [#rows, #col, #rows], iterator_types = ["parallel", "parallel"]} ins(%a1, %b1 : tensor<?x32xf32>, tensor<32xf32>) outs(%e1 : tensor<?x32xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      %m = arith.maximumf %s, %zero : f32
      linalg.yield %m : f32
    } -> tensor<?x32xf32>
    %e2 = tensor.empty(%n) : tensor<?x8xf32>
    %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x8xf32>) -> tensor<?x8xf32>
    %h2 = linalg.matmul ins(%r1, %w2 : tensor<?x32xf32>, tensor<32x8xf32>) outs(%z2 : tensor<?x8xf32>) -> tensor<?x8xf32>
    %a2 = gnn.spmm sum %g, %h2 : tensor<?x8xf32> -> tensor<?x8xf32>
    return %a2 : tensor<?x8xf32>
  }

  // A lone spmm is one kernel either way: the per-op (tuned) group forms.
  // CHECK-LABEL: func.func @lone_spmm
  // CHECK-NOT: graph_block
  // CHECK: family = aggregation
  func.func @lone_spmm(%g: !gnn.graph, %x: tensor<?x16xf32>) -> tensor<?x16xf32> {
    %a = gnn.spmm sum %g, %x : tensor<?x16xf32> -> tensor<?x16xf32>
    return %a : tensor<?x16xf32>
  }

  // A max aggregation is not taken: the per-op groups form.
  // CHECK-LABEL: func.func @max
  // CHECK-NOT: graph_block
  // CHECK: family = aggregation
  func.func @max(%g: !gnn.graph, %x: tensor<?x16xf32>) -> tensor<?x16xf32> {
    %a = gnn.spmm max %g, %x : tensor<?x16xf32> -> tensor<?x16xf32>
    return %a : tensor<?x16xf32>
  }

  // Nor a reduction over the nodes (a weight gradient).
  // CHECK-LABEL: func.func @row_sum
  // CHECK-NOT: graph_block
  func.func @row_sum(%g: !gnn.graph, %x: tensor<?x16xf32>) -> tensor<16xf32> {
    %zero = arith.constant 0.0 : f32
    %a = gnn.spmm sum %g, %x : tensor<?x16xf32> -> tensor<?x16xf32>
    %e = tensor.empty() : tensor<16xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
    %s = linalg.generic {indexing_maps = [#rows, #col], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<?x16xf32>) outs(%z : tensor<16xf32>) {
    ^bb0(%v: f32, %o: f32):
      %t = arith.addf %v, %o : f32
      linalg.yield %t : f32
    } -> tensor<16xf32>
    return %s : tensor<16xf32>
  }

  // Nor an spmm weighted by computed edge values.
  // CHECK-LABEL: func.func @computed_weights
  // CHECK-NOT: graph_block
  func.func @computed_weights(%g: !gnn.graph, %x: tensor<?x16xf32>) -> tensor<?x16xf32> {
    %s = gnn.sddmm dot %g, %x, %x : tensor<?x16xf32>, tensor<?x16xf32> -> tensor<?xf32>
    %a = gnn.spmm sum %g, %x weights(%s : tensor<?xf32>) : tensor<?x16xf32> -> tensor<?x16xf32>
    return %a : tensor<?x16xf32>
  }

  // Rows too wide for shared memory (16 nodes of 1024 floats, twice: 128
  // KiB) keep the per-op groups.
  // CHECK-LABEL: func.func @too_wide
  // CHECK-NOT: graph_block
  func.func @too_wide(%g: !gnn.graph, %x: tensor<?x1024xf32>) -> tensor<?x1024xf32> {
    %a = gnn.spmm sum %g, %x : tensor<?x1024xf32> -> tensor<?x1024xf32>
    %b = gnn.spmm sum %g, %a : tensor<?x1024xf32> -> tensor<?x1024xf32>
    %c = gnn.spmm sum %g, %b : tensor<?x1024xf32> -> tensor<?x1024xf32>
    return %c : tensor<?x1024xf32>
  }
}

// -----

// Graphs above 128 nodes: no graph block.
#rows = affine_map<(d0, d1) -> (d0, d1)>
module attributes {gnn.graph_stats = #gnn.graph_stats<nodes = 36000, edges = 75000, max_in = 4, max_out = 4, p50 = 2, p90 = 3, p99 = 4, p999 = 4, rows_by_degree = [], edges_by_degree = [], isolated = 0, self_loops = 0, directed = false, graphs = 100, smallest_graph = 3, largest_graph = 200, csr_order = false>} {
  // CHECK-LABEL: func.func @large
  // CHECK-NOT: graph_block
  // CHECK: family = aggregation
  func.func @large(%g: !gnn.graph, %x: tensor<?x16xf32>) -> tensor<?x16xf32> {
    %a = gnn.spmm sum %g, %x : tensor<?x16xf32> -> tensor<?x16xf32>
    return %a : tensor<?x16xf32>
  }
}
