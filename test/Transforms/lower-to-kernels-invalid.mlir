// RUN: gnn-opt %s --gnn-lower-to-kernels -split-input-file -verify-diagnostics

func.func @no_schedule(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'gnn.kernel_group' op has no schedule; run gnn-select-schedules (or the gnn-codegen-pipeline) first}}
  %r = gnn.kernel_group "spmm_0" -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @bad_name(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects a kernel name made of letters, digits and '_' (not starting with a digit) but got 'k(); evil'}}
  %r = gnn.kernel_group "k(); evil" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @twice(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "k" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  // expected-error @+1 {{reuses the kernel name 'k'}}
  %q = gnn.kernel_group "k" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %r : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %s : tensor<?x8xf32>
  }
  return %q : tensor<?x8xf32>
}

// -----

func.func @f64(%g: !gnn.graph, %x: tensor<?x8xf64>) -> tensor<?x8xf64> {
  %r = gnn.kernel_group "spmm_0" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf64> {
    // expected-error @+1 {{'gnn.spmm' op uses 'tensor<?x8xf64>'; the CUDA backend supports only f32 tensors}}
    %s = gnn.spmm sum %g, %x : tensor<?x8xf64> -> tensor<?x8xf64>
    gnn.yield %s : tensor<?x8xf64>
  }
  return %r : tensor<?x8xf64>
}

// -----

func.func @vector(%g: !gnn.graph, %x: tensor<?x6xf32>) -> tensor<?x6xf32> {
  %r = gnn.kernel_group "spmm_0" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x6xf32> {
    // expected-error @+1 {{'gnn.spmm' op has rows of 6 elements, not a multiple of the schedule's vector width 4}}
    %s = gnn.spmm sum %g, %x : tensor<?x6xf32> -> tensor<?x6xf32>
    gnn.yield %s : tensor<?x6xf32>
  }
  return %r : tensor<?x6xf32>
}

// -----

func.func @wide(%g: !gnn.graph, %x: tensor<?x16384xf32>) -> tensor<?x16384xf32> {
  %r = gnn.kernel_group "spmm_0" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x16384xf32> {
    // expected-error @+1 {{'gnn.spmm' op has rows of 16384 elements; the CUDA backend keeps at most 2048 accumulators per row team}}
    %s = gnn.spmm sum %g, %x : tensor<?x16384xf32> -> tensor<?x16384xf32>
    gnn.yield %s : tensor<?x16384xf32>
  }
  return %r : tensor<?x16384xf32>
}

// -----

func.func @features(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "spmm_0" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    // expected-error @+1 {{'gnn.spmm' op reads features computed inside its kernel group by an op that cannot be evaluated per node (only degrees and elementwise ops)}}
    %t = gnn.spmm sum %g, %s : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %t : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @not_a_consumer(%g: !gnn.graph, %x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "spmm_0" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %s = gnn.spmm sum %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    // expected-error @+1 {{'linalg.matmul' op is not an elementwise consumer; a kernel group ends with its anchor op and its consumers}}
    %t = linalg.matmul ins(%s, %w : tensor<?x8xf32>, tensor<8x8xf32>) outs(%s : tensor<?x8xf32>) -> tensor<?x8xf32>
    gnn.yield %t : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @weights(%g: !gnn.graph, %x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = gnn.kernel_group "spmm_0" schedule = #gnn.schedule<mapping = row_parallel, lanes = 32, block = 256, vector = 4, split = 0> -> tensor<?x8xf32> {
    %e = gnn.gather src %g, %x : tensor<?x8xf32> -> tensor<?x8xf32>
    // expected-error @+1 {{'gnn.spmm' op expects fused producers of an spmm to compute its weights}}
    %t = gnn.spmm sum %g, %y : tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.yield %t : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}
