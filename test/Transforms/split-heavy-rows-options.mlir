// RUN: not gnn-opt %s --pass-pipeline='builtin.module(gnn-split-heavy-rows{max-chunks=0})' 2>&1 | FileCheck %s
// RUN: not gnn-opt %s --gnn-cuda-pipeline='max-chunks=-3' 2>&1 | FileCheck %s --check-prefix=NEG

// RUN: not gnn-opt %s --gnn-cuda-pipeline='max-chunks=2147483648' 2>&1 | FileCheck %s --check-prefix=BIG

// CHECK: error: expects max-chunks between 1 and 2147483647 but got 0
// NEG: error: expects max-chunks between 1 and 2147483647 but got -3
// BIG: error: expects max-chunks between 1 and 2147483647 but got 2147483648
func.func @f(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
