// The `split` option forces the heavy-row threshold of every aggregation and
// attention group (measurements, tuning); other groups never split.
// RUN: gnn-opt %s --gnn-codegen-pipeline='stats=mean-degree:13,max-in:5000 split=64' | FileCheck %s
// RUN: gnn-opt %s --gnn-codegen-pipeline='stats=mean-degree:13,max-in:5000 split=0' | FileCheck %s --check-prefix=OFF
// RUN: gnn-opt %s --gnn-codegen-pipeline='stats=mean-degree:13,max-in:5000' | FileCheck %s --check-prefix=CHOSEN
// RUN: not gnn-opt %s --gnn-codegen-pipeline='split=16' 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK: "spmm_0" family = aggregation schedule = <mapping = row_parallel, lanes = 32, block = 64, vector = 4, split = 64>
// CHECK: "edge_softmax_0" family = edge_softmax schedule = <{{.*}}split = 0>
// OFF: "spmm_0" family = aggregation schedule = <{{.*}}split = 0>
// CHOSEN: "spmm_0" family = aggregation schedule = <{{.*}}split = 128>
// BAD: error: expects split -1 (from the statistics), 0 or at least 32 but got 16
func.func @f(%g: !gnn.graph, %x: tensor<?x64xf32>, %s: tensor<?x4xf32> {gnn.domain = "edge"}) -> (tensor<?x64xf32>, tensor<?x4xf32>) {
  %o = gnn.spmm sum %g, %x : tensor<?x64xf32> -> tensor<?x64xf32>
  %a = gnn.edge_softmax %g, %s : tensor<?x4xf32>
  return %o, %a : tensor<?x64xf32>, tensor<?x4xf32>
}
