// RUN: not gnn-opt %s --gnn-lower-to-kernels='index-bits=16' 2>&1 | FileCheck %s
// RUN: not gnn-opt %s --gnn-cuda-pipeline='index-bits=8' 2>&1 | FileCheck %s --check-prefix=PIPELINE

// The graph's index width is checked once, on the module.

// CHECK: error: expects index-bits to be 32 or 64 but got 16
// PIPELINE: error: expects index-bits to be 32 or 64 but got 8
func.func @f(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
