// RUN: gnn-opt %s -split-input-file --gnn-cuda-pipeline | FileCheck %s

// How many edges a step the fused attention's edge loop takes (gnnk.for_edges'
// group), by the aggregated values' type and the module's statistics: two in
// f32; in bf16 and f16 four where the mean in-degree is 128 or more, else two;
// one in f64. Each grouped loop has a rest region taking single edges.

// CHECK-LABEL: gnnk.kernel @attention_0(
// CHECK: gnnk.for_edges
// CHECK-SAME: attributes {group = 4 : i64}
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: f32,
// CHECK: gnnk.team_reduce {{.*}} : f32, f32, f32, f32 {
// CHECK: } rest {
// CHECK: } merge {
module attributes {gnn.graph_stats = #gnn.graph_stats<nodes = 1000, edges = 200000, max_in = 600, max_out = 600, p50 = 200, p90 = 300, p99 = 400, p999 = 500, rows_by_degree = [], edges_by_degree = [], isolated = 0, self_loops = 0, directed = true, graphs = 1, smallest_graph = 1000, largest_graph = 1000, csr_order = false>} {
func.func @dot_bf16(%g: !gnn.graph, %q: tensor<?x4x32xbf16>, %k: tensor<?x4x32xbf16>) -> tensor<?x4x32xbf16> {
  %s = gnn.sddmm dot %g, %k, %q : tensor<?x4x32xbf16>, tensor<?x4x32xbf16> -> tensor<?x4xbf16>
  %a = gnn.edge_softmax %g, %s : tensor<?x4xbf16>
  %o = gnn.spmm sum %g, %k weights(%a : tensor<?x4xbf16>) : tensor<?x4x32xbf16> -> tensor<?x4x32xbf16>
  return %o : tensor<?x4x32xbf16>
}
}

// -----

// Short rows (mean in-degree 16): two in bf16.
// CHECK-LABEL: gnnk.kernel @attention_0(
// CHECK: gnnk.for_edges
// CHECK-SAME: attributes {group = 2 : i64}
module attributes {gnn.graph_stats = #gnn.graph_stats<nodes = 1000, edges = 16000, max_in = 64, max_out = 64, p50 = 16, p90 = 30, p99 = 50, p999 = 60, rows_by_degree = [], edges_by_degree = [], isolated = 0, self_loops = 0, directed = true, graphs = 1, smallest_graph = 1000, largest_graph = 1000, csr_order = false>} {
func.func @dot_bf16_short(%g: !gnn.graph, %q: tensor<?x4x32xbf16>, %k: tensor<?x4x32xbf16>) -> tensor<?x4x32xbf16> {
  %s = gnn.sddmm dot %g, %k, %q : tensor<?x4x32xbf16>, tensor<?x4x32xbf16> -> tensor<?x4xbf16>
  %a = gnn.edge_softmax %g, %s : tensor<?x4xbf16>
  %o = gnn.spmm sum %g, %k weights(%a : tensor<?x4xbf16>) : tensor<?x4x32xbf16> -> tensor<?x4x32xbf16>
  return %o : tensor<?x4x32xbf16>
}
}

// -----

// f32 on long rows: two.
// CHECK-LABEL: gnnk.kernel @attention_0(
// CHECK: gnnk.for_edges
// CHECK-SAME: attributes {group = 2 : i64}
module attributes {gnn.graph_stats = #gnn.graph_stats<nodes = 1000, edges = 200000, max_in = 600, max_out = 600, p50 = 200, p90 = 300, p99 = 400, p999 = 500, rows_by_degree = [], edges_by_degree = [], isolated = 0, self_loops = 0, directed = true, graphs = 1, smallest_graph = 1000, largest_graph = 1000, csr_order = false>} {
func.func @dot_f32(%g: !gnn.graph, %q: tensor<?x4x32xf32>, %k: tensor<?x4x32xf32>) -> tensor<?x4x32xf32> {
  %s = gnn.sddmm dot %g, %k, %q : tensor<?x4x32xf32>, tensor<?x4x32xf32> -> tensor<?x4xf32>
  %a = gnn.edge_softmax %g, %s : tensor<?x4xf32>
  %o = gnn.spmm sum %g, %k weights(%a : tensor<?x4xf32>) : tensor<?x4x32xf32> -> tensor<?x4x32xf32>
  return %o : tensor<?x4x32xf32>
}
}

// -----

// f64: one edge a step (unrolled by two), no rest region.
// CHECK-LABEL: gnnk.kernel @attention_0(
// CHECK: gnnk.for_edges
// CHECK-SAME: attributes {unroll = 2 : i64}
// CHECK-NOT: } rest {
// CHECK: } merge {
func.func @dot_f64(%g: !gnn.graph, %q: tensor<?x4x32xf64>, %k: tensor<?x4x32xf64>) -> tensor<?x4x32xf64> {
  %s = gnn.sddmm dot %g, %k, %q : tensor<?x4x32xf64>, tensor<?x4x32xf64> -> tensor<?x4xf64>
  %a = gnn.edge_softmax %g, %s : tensor<?x4xf64>
  %o = gnn.spmm sum %g, %k weights(%a : tensor<?x4xf64>) : tensor<?x4x32xf64> -> tensor<?x4x32xf64>
  return %o : tensor<?x4x32xf64>
}
