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
