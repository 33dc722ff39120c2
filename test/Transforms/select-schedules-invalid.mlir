// RUN: gnn-opt %s --gnn-select-schedules -split-input-file -verify-diagnostics
// RUN: not gnn-opt %s --gnn-select-schedules='stats=mean-degree:-1' -split-input-file 2>&1 | FileCheck %s --check-prefix=MEAN
// RUN: not gnn-opt %s --gnn-select-schedules='stats=mean-degree:1e308' -split-input-file 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not gnn-opt %s --gnn-select-schedules='stats=mean-degree:1e999' -split-input-file 2>&1 | FileCheck %s --check-prefix=INF

// A problem the scheduler cannot take is reported on its group; a group
// whose rows have no element has no schedule.

func.func @empty_rows(%g: !gnn.graph, %x: tensor<?x0xf32>) -> tensor<?x0xf32> {
  // expected-error @+1 {{'gnn.kernel_group' op cannot be scheduled: row of 0 elements}}
  %r = gnn.kernel_group "spmm_0" family = aggregation -> tensor<?x0xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x0xf32> -> tensor<?x0xf32>
    gnn.yield %s : tensor<?x0xf32>
  }
  return %r : tensor<?x0xf32>
}

// -----

// The graph statistics of the options are checked with every group.

// MEAN: error: gnn-select-schedules: bad `stats` 'mean-degree:-1': 'mean-degree' expects a nonnegative number, found '-1'
// A number too large was called not a nonnegative number.
// HUGE: error: gnn-select-schedules: bad `stats` 'mean-degree:1e308': 'mean-degree' expects a finite number of at most 1e12, found '1e308'
// INF: 'mean-degree' expects a finite number of at most 1e12, found '1e999' (not finite)
func.func @spmm(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "spmm_0" family = aggregation -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}
