// RUN: gnn-opt %s --gnn-codegen-pipeline='mean-degree=2.0' | FileCheck %s --check-prefix=SPARSE
// RUN: gnn-opt %s --gnn-codegen-pipeline='mean-degree=40.0' | FileCheck %s --check-prefix=DENSE

// Aggregations are row-parallel with the lanes over the features (float4 for
// widths divisible by 4); with long rows the whole warp takes the row.
// Softmax teams grow with the mean degree; sddmm is edge-parallel.

// SPARSE-LABEL: func.func @schedules
// SPARSE: "spmm_0" schedule = <mapping = row_parallel, lanes = 16, block = 256, vector = 4, split = 0>
// SPARSE: "spmm_1" schedule = <mapping = row_parallel, lanes = 4, block = 256, vector = 2, split = 0>
// SPARSE: "sddmm_0" schedule = <mapping = edge_parallel, lanes = 1, block = 256, vector = 1, split = 0>
// SPARSE: "edge_softmax_0" schedule = <mapping = row_parallel, lanes = 4, block = 256, vector = 1, split = 0>
// SPARSE: "degree_0" schedule = <mapping = element_parallel, lanes = 1, block = 256, vector = 1, split = 0>
// DENSE-LABEL: func.func @schedules
// DENSE: "spmm_0" schedule = <mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0>
// DENSE: "spmm_1" schedule = <mapping = row_parallel, lanes = 32, block = 256, vector = 2, split = 0>
// DENSE: "edge_softmax_0" schedule = <mapping = row_parallel, lanes = 32, block = 256, vector = 1, split = 0>
func.func @schedules(%g: !gnn.graph, %x: tensor<?x64xf32>, %y: tensor<?x6xf32>, %h: tensor<?x4x8xf32>)
    -> (tensor<?x64xf32>, tensor<?x6xf32>, tensor<?x4xf32>, tensor<?xf32>) {
  %a = gnn.spmm sum %g, %x : tensor<?x64xf32> -> tensor<?x64xf32>
  %b = gnn.spmm mean %g, %y : tensor<?x6xf32> -> tensor<?x6xf32>
  %s = gnn.sddmm dot %g, %h, %h : tensor<?x4x8xf32>, tensor<?x4x8xf32> -> tensor<?x4xf32>
  %p = gnn.edge_softmax %g, %s : tensor<?x4xf32>
  %d = gnn.degree %g : tensor<?xf32>
  return %a, %b, %p, %d : tensor<?x64xf32>, tensor<?x6xf32>, tensor<?x4xf32>, tensor<?xf32>
}
