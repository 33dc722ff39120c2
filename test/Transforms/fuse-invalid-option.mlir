// RUN: gnn-opt %s --pass-pipeline='builtin.module(func.func(gnn-form-kernel-groups{fuse=attention,softmax}))' -verify-diagnostics
// RUN: not gnn-opt %s --pass-pipeline='builtin.module(func.func(gnn-form-kernel-groups{fuse=none,attention}))' 2>&1 | FileCheck %s

// An unknown rule, or `none` with others, is rejected on every function.

// CHECK: error: expects fuse to be 'none' alone or a list of 'graph_block', 'attention' and 'aggregation' but got 'none,attention'
// expected-error @below {{expects fuse to be 'none' alone or a list of 'graph_block', 'attention' and 'aggregation' but got 'attention,softmax'}}
func.func @f(%g: !gnn.graph) -> tensor<?xf32> {
  %d = gnn.degree %g : tensor<?xf32>
  return %d : tensor<?xf32>
}
