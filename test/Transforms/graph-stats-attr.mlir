// RUN: gnn-opt %s --split-input-file --verify-diagnostics --gnn-codegen-pipeline | FileCheck %s
// RUN: gnn-opt %s --split-input-file --verify-diagnostics --gnn-codegen-pipeline='stats=mean-degree:2.0' | FileCheck %s --check-prefix=OPTION

// The schedules follow the module's gnn.graph_stats (what the compile driver
// sets); a `stats` option written by hand takes precedence.

// CHECK: module attributes {gnn.graph_stats = #gnn.graph_stats<nodes = 1000, edges = 40000,
// CHECK-LABEL: func.func @dense
// CHECK: "spmm_0" family = aggregation schedule = <mapping = row_parallel, lanes = 32, block = 64, vector = 4, split = 0>
// OPTION-LABEL: func.func @dense
// OPTION: "spmm_0" family = aggregation schedule = <mapping = row_parallel, lanes = 16, block = 64, vector = 4, split = 0>
module attributes {gnn.graph_stats = #gnn.graph_stats<nodes = 1000, edges = 40000,
    max_in = 40, max_out = 40, p50 = 40, p90 = 40, p99 = 40, p999 = 40,
    rows_by_degree = [], edges_by_degree = [], isolated = 0, self_loops = 0,
    directed = false, graphs = 1, smallest_graph = 1000, largest_graph = 1000,
    csr_order = false>} {
func.func @dense(%g: !gnn.graph, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %a = gnn.spmm sum %g, %x : tensor<?x64xf32> -> tensor<?x64xf32>
  return %a : tensor<?x64xf32>
}
}

// -----

// expected-error @+1 {{expects edges >= 0 but got -5}}
module attributes {gnn.graph_stats = #gnn.graph_stats<nodes = 10, edges = -5,
    max_in = 0, max_out = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0,
    rows_by_degree = [], edges_by_degree = [], isolated = 0, self_loops = 0,
    directed = false, graphs = 1, smallest_graph = 10, largest_graph = 10,
    csr_order = false>} {
}
