// RUN: gnn-opt %s -split-input-file | gnn-opt -split-input-file | FileCheck %s
// RUN: gnn-opt %s -split-input-file -mlir-print-op-generic | gnn-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @group
// CHECK: gnn.kernel_group "spmm_0" family = aggregation schedule = <mapping = row_parallel, lanes = 16, block = 256, vector = 4, split = 0> -> tensor<?x64xf32> {
// CHECK:   gnn.spmm sum
// CHECK:   gnn.yield %{{.*}} : tensor<?x64xf32>
func.func @group(%g: !gnn.graph, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %r = gnn.kernel_group "spmm_0" family = aggregation schedule = #gnn.schedule<mapping = row_parallel, lanes = 16, block = 256, vector = 4, split = 0> -> tensor<?x64xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.yield %s : tensor<?x64xf32>
  }
  return %r : tensor<?x64xf32>
}

// -----

// CHECK-LABEL: func.func @unscheduled
// CHECK: gnn.kernel_group "degree_0" family = degree -> tensor<?xf32> {
func.func @unscheduled(%g: !gnn.graph) -> tensor<?xf32> {
  %r = gnn.kernel_group "degree_0" family = degree -> tensor<?xf32> {
    %d = gnn.degree %g : tensor<?xf32>
    gnn.yield %d : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}
